// The lab's options from the command line, checked before anything is set up. Pure.
import { parseBitRate, parseCount, parseDuration, parsePercent, UsageError } from '../policy/units.js';
import type { LabOptions } from './lab.js';

export interface LabSpecInput {
  rtt?: string;
  bandwidth?: string;
  loss?: string;
  mtu?: string;
  threads?: string;
}

export const LAB_DEFAULTS = { rtt: '2ms', loss: '0%', mtu: '1500' };

/** LabOptions from option values (`--rtt 2ms --bandwidth 5gbit --loss 0.1% --mtu 1500`). */
export function parseLabSpec(input: LabSpecInput, prefix = '--'): LabOptions {
  const rttS = parseDuration(input.rtt ?? LAB_DEFAULTS.rtt, `${prefix}rtt`);
  if (rttS > 10)
    throw new UsageError(`invalid value for ${prefix}rtt: '${input.rtt}' (expected at most 10s)`);
  const opts: LabOptions = {
    rttMs: rttS * 1000,
    loss: parsePercent(input.loss ?? LAB_DEFAULTS.loss, `${prefix}loss`),
    mtu: parseCount(input.mtu ?? LAB_DEFAULTS.mtu, `${prefix}mtu`, 576, 65535),
  };
  if (input.bandwidth !== undefined) {
    opts.bitsPerSecond = parseBitRate(input.bandwidth, `${prefix}bandwidth`);
  }
  if (input.threads !== undefined)
    opts.threads = parseCount(input.threads, `${prefix}threads`, 1, 2) as 1 | 2;
  return opts;
}

/** The `--lab rtt=2ms,bandwidth=5gbit` shorthand of bench. */
export function parseLabShorthand(value: string, option = '--lab'): LabOptions {
  const input: Record<string, string> = {};
  for (const part of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(rtt|bandwidth|loss|mtu|threads)=(.+)$/.exec(part);
    if (!m) {
      throw new UsageError(
        `invalid value for ${option}: '${value}' (expected key=value pairs of rtt, bandwidth, loss, mtu, threads, e.g. rtt=2ms,bandwidth=5gbit)`,
      );
    }
    input[m[1]] = m[2];
  }
  return parseLabSpec(input, `${option} `);
}
