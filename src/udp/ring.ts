// The shared ring between a reader thread and the consumer. Pure: layout and index arithmetic only.
//
// A ring holds `entries` batches plus one scratch batch (index `entries`) that the reader fills when
// the ring is full and it has to drop. A batch is `batch` message slots of `slot` bytes each; with
// GRO one message holds up to MAX_SEGMENTS datagrams, so the per-datagram arrays have room for
// `batch * perSlot` entries. `head` counts batches the reader committed, `tail` those the consumer
// released; both only grow (as int32 they wrap, which the subtraction below absorbs).

export interface RingLayout {
  entries: number;
  batch: number;
  slot: number;
  /** Datagrams one message slot can hold: 1, or MAX_SEGMENTS with GRO. */
  perSlot: number;
  /** Datagrams one batch can hold. */
  maxDatagrams: number;
  /** Bytes of one batch's data. */
  batchBytes: number;
}

export function ringLayout(entries: number, batch: number, slot: number, perSlot: number): RingLayout {
  return { entries, batch, slot, perSlot, maxDatagrams: batch * perSlot, batchBytes: batch * slot };
}

/**
 * Default ring depth: at most `budget` bytes of batches, 4 to 256 of them: 256 × 64 × 2 KiB = 32 MiB
 * without GRO (16 384 datagrams: 65 ms at 250 k/s, for a consumer that is off the CPU a while);
 * 32 × 64 × 64 KiB = 128 MiB with GRO's slots, of which the kernel touches (and the process pays
 * for) only the pages datagrams land in.
 */
export function defaultEntries(batch: number, slot: number, budget = 128 * 1024 * 1024): number {
  return Math.max(4, Math.min(256, Math.floor(budget / (batch * slot))));
}

/** Batches committed and not yet released. */
export function used(head: number, tail: number): number {
  return (head - tail) | 0;
}

export function isFull(head: number, tail: number, entries: number): boolean {
  return used(head, tail) >= entries;
}

/** The ring entry the n-th batch lives in. */
export function entryOf(n: number, entries: number): number {
  return (n >>> 0) % entries;
}

/** Control words (Int32Array) shared by reader and consumer. */
export const CTRL = {
  HEAD: 0,
  TAIL: 1,
  STOP: 2,
  /** Set by the reader when it has exited its loop. */
  DONE: 3,
  SIZE: 4,
} as const;

/** Counters (Float64Array) written by the reader only. */
export const COUNTER = {
  RECEIVED: 0,
  BYTES: 1,
  TRUNCATED: 2,
  USERSPACE_DROPS: 3,
  CALLS: 4,
  MESSAGES: 5,
  ERRORS: 6,
  SIZE: 8,
} as const;

/** Histogram of datagrams per batch: bucket i counts batches of 2^i … 2^(i+1)−1 datagrams. */
export function bucketOf(count: number): number {
  return count <= 1 ? 0 : 31 - Math.clz32(count);
}

export function bucketLabel(i: number): string {
  return i === 0 ? '1' : `${2 ** i}-${2 ** (i + 1) - 1}`;
}
