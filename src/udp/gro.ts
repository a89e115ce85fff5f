// Splitting a UDP_GRO message into its datagrams. Pure. The kernel coalesces segments of one flow
// into one message and attaches the segment size; every segment has that size except the last,
// which may be shorter. A message without a segment size (0) is one datagram.

/**
 * Writes the offsets and lengths of the datagrams in a message of `total` bytes at `base` into
 * `offsets`/`lengths` from index `at`; returns how many it wrote. A 0-byte message is one 0-byte
 * datagram.
 */
export function splitGro(
  total: number,
  segment: number,
  base: number,
  offsets: Uint32Array,
  lengths: Uint32Array,
  at: number,
): number {
  if (segment <= 0 || total <= segment) {
    offsets[at] = base;
    lengths[at] = total;
    return 1;
  }
  let n = 0;
  for (let off = 0; off < total; off += segment) {
    offsets[at + n] = base + off;
    lengths[at + n] = Math.min(segment, total - off);
    n++;
  }
  return n;
}

/** How many datagrams a message of `total` bytes with segment size `segment` holds. @internal (its test) */
export function groCount(total: number, segment: number): number {
  return segment <= 0 || total <= segment ? 1 : Math.ceil(total / segment);
}

/** The kernel's limit of segments per GRO message and per GSO send (UDP_GRO_CNT_MAX, UDP_MAX_SEGMENTS ≥ 64). */
export const MAX_SEGMENTS = 64;
