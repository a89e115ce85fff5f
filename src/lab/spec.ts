// The lab's options (LabOptions) and how they are read from the command line, checked before anything
// is set up. Pure.

import { UsageError } from '../errors.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { parsePercent } from '../policy/units.js';

/** What a lab takes: the round-trip time, the bandwidth, the loss and the queue. */
export interface LabOptions {
  rttMs: number;
  /** Rate cap in bit/s each way; 0 or undefined = none. */
  bitsPerSecond?: number;
  /** Loss probability per segment each way, 0…1. */
  loss?: number;
  mtu?: number;
  /** Delay-line threads: 2 = one per direction (default), 1 = one for both. */
  threads?: 1 | 2;
  /**
   * TCP congestion control of both hosts, set on their routes to each other (`ip route … congctl`, so
   * every TCP connection across the lab uses it, whatever program made it): default 'cubic';
   * 'host' keeps the kernel's default.
   */
  congestion?: string;
  /** Made by `sockbuf lab up` (a hold process): only such labs are what lab down / lab exec / the lab placement pick. */
  held?: boolean;
}

export interface LabSpecInput {
  rtt?: string;
  bandwidth?: string;
  loss?: string;
  mtu?: string;
  threads?: string;
  congestion?: string;
}

/**
 * congestion 'cubic': Linux's stock default and what the seeds' hosts ran, not the host's default: a
 * kernel built with BBR as its default (CONFIG_DEFAULT_TCP_CONG) paces the sender, which then waits on
 * its pacing timer rather than on the window; the kernel counts that time as busy, not rwnd-limited,
 * so seed 000's 98–100 % rwnd-limited would read ~45–50 %.
 */
export const LAB_DEFAULTS = {
  rtt: OPTIONS.labRtt.default,
  loss: '0%',
  mtu: String(OPTIONS.mtu.default),
  congestion: 'cubic',
};

/** `--congestion host`: keep the kernel's default congestion control in the lab's hosts. */
export const HOST_CONGESTION = 'host';

/** LabOptions from option values (`--rtt 2ms --bandwidth 5gbit --loss 0.1% --mtu 1500`). */
export function parseLabSpec(input: LabSpecInput, prefix = ''): LabOptions {
  const opts: LabOptions = {
    rttMs: checkOption('labRtt', input.rtt ?? OPTIONS.labRtt.default, `${prefix}rtt`),
    loss: parsePercent(input.loss ?? LAB_DEFAULTS.loss, `${prefix}loss`),
    mtu: checkWhole('mtu', input.mtu ?? LAB_DEFAULTS.mtu, `${prefix}mtu`),
    congestion: parseCongestion(input.congestion ?? LAB_DEFAULTS.congestion, `${prefix}congestion`),
  };
  if (input.bandwidth !== undefined) {
    opts.bitsPerSecond = checkOption('labBandwidth', input.bandwidth, `${prefix}bandwidth`);
  }
  if (input.threads !== undefined)
    opts.threads = checkWhole('threads', input.threads, `${prefix}threads`) as 1 | 2;
  return opts;
}

/** A TCP congestion control name (at most 15 characters, as the kernel's TCP_CA_NAME_MAX) or 'host'. */
export function parseCongestion(value: string, option = 'congestion'): string {
  if (!/^[a-z][a-z0-9_]{0,14}$/.test(value)) {
    throw UsageError.invalid(
      option,
      value,
      "a TCP congestion control such as cubic, reno, bbr, or host for the kernel's default",
    );
  }
  return value;
}

/** The `--lab rtt=2ms,bandwidth=5gbit` shorthand of bench. */
export function parseLabShorthand(value: string, option = 'lab'): LabOptions {
  const input: Record<string, string> = {};
  const parts = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  // nothing said is not "the defaults": a lab is brought up only when asked for by what it should be
  if (parts.length === 0)
    throw UsageError.invalid(option, value, 'key=value pairs such as rtt=2ms,bandwidth=5gbit');
  for (const part of parts) {
    const m = /^(rtt|bandwidth|loss|mtu|threads|congestion)=(.+)$/.exec(part);
    if (!m) {
      throw UsageError.invalid(
        option,
        value,
        'key=value pairs of rtt, bandwidth, loss, mtu, threads, congestion, e.g. rtt=2ms,bandwidth=5gbit',
      );
    }
    input[m[1]] = m[2];
  }
  return parseLabSpec(input, `${option} `);
}
