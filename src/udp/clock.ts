// The one clock of arrival and send times: wall-clock microseconds, comparable across processes on
// one host (the receiver's arrival stamps and the test header's send times are compared); and how long
// the reader thread naps for the rest of a batch.
export function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}

/** Shorter naps than this are not worth a sleep: wait for the socket instead. */
const MIN_NAP_NS = 20e3;

/**
 * How long to nap before reading again: the time `missing` more messages take at `gapNs` apart, at
 * most `leftNs` (the rest of the coalesce window); 0 when too short to sleep for. Pure.
 */
export function napNs(missing: number, gapNs: number, leftNs: number): number {
  const t = Math.min(leftNs, missing * gapNs);
  return t >= MIN_NAP_NS ? t : 0;
}
