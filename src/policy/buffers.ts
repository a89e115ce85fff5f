// Buffer policy, the pure part: what the options mean, what a read-back value says, what to warn.
// The rules (seeds 000/001/004, docs/seeds.md):
// - TCP rcvbuf/sndbuf default to 'auto': no setsockopt at all, so the kernel keeps autotuning
//   (setting SO_RCVBUF/SO_SNDBUF locks the size and switches autotuning off for that socket).
// - A size is applied before connect/listen, read back (the kernel doubles it and clamps the request
//   to net.core.rmem_max/wmem_max first) and reported; when clamped, one warning names the sysctl.
// - UDP has no autotuning: a target receive buffer, met when getsockopt reports at least the target.

import { UsageError } from '../errors.js';
import { BUFFER_BYTES, checkOption, isBufferSize, OPTIONS } from './option-registry.js';
import { formatSize, parseSize } from './units.js';

/** A buffer size as an option takes it: bytes, a size with its unit (`4MiB`), or `auto` (autotuning). */
export type BufferSize = 'auto' | number | string;

/** TCP buffer options. A size is bytes or a size string ('64K', '4MiB'); 'auto' (default) = leave alone. */
export interface TcpBufferOptions {
  rcvbuf?: BufferSize;
  sndbuf?: BufferSize;
}

/** What happened to a pinned size. `effective` is what getsockopt reports (the kernel's doubled value). */
export interface PinnedBuffer {
  /** Bytes asked of setsockopt. */
  requested: number;
  /** Bytes getsockopt reports afterwards: 2 × min(requested, limit). */
  effective: number;
  /** net.core.rmem_max (rcvbuf) or wmem_max (sndbuf), the most setsockopt accepts, before doubling. */
  limit: number;
  /** The kernel cut the request down to `limit`. */
  clamped: boolean;
  autotuning: false;
}

/** A buffer left to the kernel. */
export interface AutoBuffer {
  requested: 'auto';
  autotuning: true;
}

/** What the buffer policy did to a TCP socket: each buffer as asked, as the kernel set it, and whether it autotunes. */
export interface TcpBufferReport {
  rcvbuf: PinnedBuffer | AutoBuffer;
  sndbuf: PinnedBuffer | AutoBuffer;
}

/** The sysctl that bounds each option. */
export const LIMIT_SYSCTL = { rcvbuf: 'net.core.rmem_max', sndbuf: 'net.core.wmem_max' } as const;

/** A size option in bytes, or undefined for 'auto'/absent. Throws UsageError naming the option. */
export function resolveSize(value: BufferSize | undefined, option: string): number | undefined {
  if (value === undefined || value === 'auto') return undefined;
  const n = parseSize(value, option);
  if (!isBufferSize(n)) throw UsageError.invalid(option, value, BUFFER_BYTES.expected);
  return n;
}

/** Both TCP options resolved: bytes to pin, or undefined to leave the kernel in charge. */
export function resolveTcpBuffers(opts: TcpBufferOptions = {}): { rcvbuf?: number; sndbuf?: number } {
  return { rcvbuf: resolveSize(opts.rcvbuf, 'rcvbuf'), sndbuf: resolveSize(opts.sndbuf, 'sndbuf') };
}

/** The report for a size that was set and read back. */
export function pinnedReport(requested: number, effective: number, limit: number): PinnedBuffer {
  return { requested, effective, limit, clamped: effective < 2 * requested, autotuning: false };
}

/** The one warning for a clamped TCP size, or undefined when it was not clamped. */
export function clampWarning(option: 'rcvbuf' | 'sndbuf', r: PinnedBuffer): string | undefined {
  if (!r.clamped) return undefined;
  const so = option === 'rcvbuf' ? 'SO_RCVBUF' : 'SO_SNDBUF';
  return (
    `${so} ${r.requested} (${formatSize(r.requested)}) was clamped by ${LIMIT_SYSCTL[option]} = ${r.limit}: ` +
    `the socket got ${r.effective} (${formatSize(r.effective)}, doubled) and autotuning is off. ` +
    `To get the size asked for: sysctl -w ${LIMIT_SYSCTL[option]}=${r.requested}`
  );
}

/** What applyUdpRcvbuf did: sizes as getsockopt reports them. */
export interface UdpRcvbufReport {
  /** The target: met when getsockopt reports at least this. */
  wanted: number;
  /** getsockopt(SO_RCVBUF) before. */
  was: number;
  /** getsockopt(SO_RCVBUF) after. */
  got: number;
  /** net.core.rmem_max. */
  limit: number;
  /** SO_RCVBUFFORCE was used (and permitted). */
  forced: boolean;
  met: boolean;
}

/** The value to ask of setsockopt for a UDP target: the kernel doubles it, so half, rounded up. */
export function udpRequest(wanted: number): number {
  return Math.ceil(wanted / 2);
}

/** quic-go style: said once, with the numbers and the sysctl line that would reach the target. */
export function udpWarning(r: UdpRcvbufReport): string | undefined {
  if (r.met) return undefined;
  const kib = (n: number) => `${Math.floor(n / 1024)} kiB`;
  return (
    `failed to sufficiently increase the UDP receive buffer (was: ${kib(r.was)}, wanted: ${kib(r.wanted)}, ` +
    `got: ${kib(r.got)}); net.core.rmem_max = ${r.limit} and SO_RCVBUFFORCE was not permitted. ` +
    `To fix: sysctl -w net.core.rmem_max=${udpRequest(r.wanted)}`
  );
}

/** The UDP receive-buffer target when none is given: 8 MiB as getsockopt reports it. */
export const UDP_RCVBUF_TARGET = checkOption('receiverRcvbuf', OPTIONS.receiverRcvbuf.default);
