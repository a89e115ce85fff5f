// The range of every whole-number option, declared once: the library checks its options against it,
// the CLI passes the values through, `serve` bounds its wire with it and the scenarios parse with it.
// Pure: no I/O.
import { UsageError } from '../errors.js';

export const LIMITS = {
  /** TCP streams of one test (blast --parallel; iperf3 -P takes up to 128). */
  parallel: { min: 1, max: 128 },
  /** Datagrams per recvmmsg/sendmmsg call (the kernel's UIO_MAXIOV is 1024). */
  batch: { min: 1, max: 1024 },
  /** UDP flows (source ports) of one sender. */
  flows: { min: 1, max: 1024 },
  /** UDP receive sockets sharing a port (SO_REUSEPORT). */
  sockets: { min: 1, max: 64 },
  /** Batches in a UDP receiver's ring. */
  ring: { min: 1, max: 4096 },
  /** Requests in flight of the framed ping. */
  inflight: { min: 1, max: 4096 },
  /** Runs of each bench point. */
  repeat: { min: 1, max: 1000 },
  /** Tests one client may run at once against `serve`. */
  maxPerClient: { min: 1, max: 4096 },
} as const;

export type Limited = keyof typeof LIMITS;

/**
 * A socket buffer size that is asked for (SO_RCVBUF/SO_SNDBUF take an int): 1 B to 2 GiB − 1. The
 * kernel clamps it further to rmem_max/wmem_max, and sockbuf reports that clamp.
 */
export const BUFFER_BYTES = { min: 1, max: 0x7fffffff, expected: '1 B to 2 GiB' } as const;

/** Whether `n` is a buffer size that can be asked for. */
export const isBufferSize = (n: number) =>
  Number.isSafeInteger(n) && n >= BUFFER_BYTES.min && n <= BUFFER_BYTES.max;

/** What a limited option takes, in words ("a whole number from 1 to 128"). */
export function expectedWhole(option: Limited): string {
  const { min, max } = LIMITS[option];
  return `a whole number from ${min} to ${max}`;
}

/**
 * `value` as a whole number within `option`'s range (a number, or a string such as the CLI's '8'), or a
 * UsageError naming `name` (the option as the caller wrote it; `option` by default).
 */
export function checkWhole(option: Limited, value: unknown, name: string = option): number {
  const { min, max } = LIMITS[option];
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw UsageError.invalid(name, value, expectedWhole(option));
  return n;
}
