// Bandwidth-delay arithmetic. Pure. A TCP stream moves at most one window per round trip, so
// ceiling = window / RTT, and the window a rate needs is rate × RTT (the bandwidth-delay product).
// For a pinned size X (setsockopt(SO_RCVBUF, X); getsockopt then reports 2X) the window is about X:
// measured across a 2 ms lab, 128 KiB carried 0.59 Gbit/s against 0.52 from this formula.
import { checkNonNegative, checkPositive } from './shape.js';

/** The most one TCP stream can carry, in bits per second, with `windowBytes` in flight per RTT. */
export function ceiling(windowBytes: number, rttSeconds: number): number {
  checkNonNegative(windowBytes, 'windowBytes', 'bytes');
  checkPositive(rttSeconds, 'rttSeconds', 'seconds');
  return (windowBytes * 8) / rttSeconds;
}

/** The window, in bytes, that `bitsPerSecond` needs at `rttSeconds` (rounded up to a whole byte). */
export function windowFor(bitsPerSecond: number, rttSeconds: number): number {
  checkNonNegative(bitsPerSecond, 'bitsPerSecond', 'bits per second');
  checkPositive(rttSeconds, 'rttSeconds', 'seconds');
  // less a hair, so that floating-point noise (5e9 × 0.00161 / 8 = 1006250.0000000001) does not round up
  return Math.ceil((bitsPerSecond * rttSeconds) / 8 - 1e-6);
}

/** The window a pinned buffer gives: about the size asked of setsockopt, half what getsockopt reports. */
export function pinnedWindow(effectiveBytes: number): number {
  return Math.floor(effectiveBytes / 2);
}
