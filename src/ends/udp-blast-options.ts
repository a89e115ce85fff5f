// `blast udp`'s paced test sender: its options and result, and the one parser of a send rate. Pure.

import { UsageError } from '../errors.js';
import type { HostPort } from '../policy/address.js';
import { expected, OPTIONS } from '../policy/option-registry.js';
import { parseBitRate, parsePacketRate } from '../policy/units.js';
import type { OffloadOption } from '../udp/offload.js';

/** What createUdpBlast takes: the destination, the datagram size, the rate, the flows and the batch. */
export interface UdpBlastOptions {
  to: string | HostPort;
  /** Payload bytes per datagram (default 64). Below 24 bytes datagrams carry no sequence number. */
  size?: number | string;
  /** Datagrams per second (`100k`), a bit rate of payload (`500mbit`), or 'max' (default). */
  rate?: number | string;
  /** Sockets with distinct source ports, sent to in turn (default 1). */
  flows?: number;
  /** Messages per sendmmsg (default 32; with GSO each message is up to 64 datagrams). */
  batch?: number;
  /** SO_SNDBUF to ask for (default: the kernel's). */
  sndbuf?: number | string;
  /** UDP_SEGMENT: true, false (default) or 'auto'. Falls back to sendmmsg, once, where refused. */
  gso?: OffloadOption;
}

/** What a UDP blast run resolves with: what was sent, refused and how fast. */
export interface UdpBlastResult {
  sent: number;
  bytes: number;
  seconds: number;
  datagramsPerSecond: number;
  /** Payload bits per second. */
  bitsPerSecond: number;
  /** Datagrams the kernel refused (ENOBUFS …), by errno; refused datagrams are retried, not numbered. */
  sendErrors: number;
  sendErrorsByCode: Record<string, number>;
  /** Times the socket buffer was full (EAGAIN) and the sender waited. */
  sendBlocked: number;
  /** Udp SndbufErrors of the whole host (IPv4) during the run. */
  hostSndbufErrors: number;
  sendCalls: number;
  flows: number;
  size: number;
  /** Whether UDP_SEGMENT was used; `gsoFallback` says why it was not, if it was asked for. */
  gso: boolean;
  gsoFallback?: string;
  /** When the last burst of datagrams was sent, ms since the epoch (seed 004's drift counts from it). */
  endedAtMs: number;
  /** CPU time of the process (user + system) during the run: on loopback the receive path is in it. */
  cpuSeconds: number;
  /** The pace asked (`rate`), in datagrams per second; absent for 'max'. */
  askedDatagramsPerSecond?: number;
  /** Whether the pace asked was kept (see paceKept); absent for 'max'. */
  paceKept?: boolean;
}

/**
 * Whether a paced send kept its pace: `sent` datagrams in `seconds` at `asked` per second, short by
 * at most 2 % and one GSO message (`segs` datagrams: a GSO sender waits for a whole one). Pure.
 */
export function paceKept(asked: number, sent: number, seconds: number, segs: number): boolean {
  return sent >= 0.98 * asked * seconds - segs;
}

/** The warning for a pace not kept: the figures, and what held the sender back where it is known. */
export function paceWarning(r: UdpBlastResult): string {
  const asked = r.askedDatagramsPerSecond ?? 0;
  const pct = Math.round((100 * r.datagramsPerSecond) / asked);
  const why =
    r.sent === 0 && r.sendErrors === 0
      ? `at ${asked} per second no datagram was due in the ${r.seconds.toFixed(2)} s it ran`
      : r.sendBlocked > 0
        ? `the socket buffer was full ${r.sendBlocked} times`
        : r.sendErrors > 0
          ? `the kernel refused ${r.sendErrors} sends`
          : "the sender's CPU could not keep up";
  return `blast udp reached ${Math.round(r.datagramsPerSecond)} datagrams/s of the ${Math.round(asked)} asked (${pct} %): ${why}`;
}

/** `--rate`: 'max', a datagram rate (`100k`, `100kpps`), or a payload bit rate (`500mbit`, `1.2GB/s`). */
export function parseSendRate(value: number | string, size: number, option = 'rate'): number {
  if (typeof value === 'string' && value.trim() === 'max') return Number.POSITIVE_INFINITY;
  const perSecond = typeof value === 'number' ? value : parseRate(value, size, option);
  // bounded as a payload bit rate, as doctor's --bandwidth is: 10 Tbit/s
  if (!(perSecond > 0 && perSecond * 8 * Math.max(size, 1) <= OPTIONS.rate.max))
    throw UsageError.invalid(option, value, expected('rate'));
  return perSecond;
}

/** Datagrams per second from a datagram rate or a payload bit rate (of `size`-byte datagrams). */
function parseRate(value: string, size: number, option: string): number {
  try {
    return parsePacketRate(value, option);
  } catch {
    try {
      return parseBitRate(value, option) / (8 * Math.max(size, 1));
    } catch {
      throw UsageError.invalid(option, value, expected('rate'));
    }
  }
}
