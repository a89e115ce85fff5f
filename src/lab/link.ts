// The link model of the delay line, as plain arithmetic: when a packet that arrives now leaves the
// far end (propagation delay plus serialisation at the rate cap), whether the bottleneck queue has
// room for it, whether it is lost, and where in a byte ring it is held meanwhile. No I/O here.

export interface LinkParams {
  /** One-way delay in milliseconds (rtt / 2). */
  delayMs: number;
  /** Rate cap in bits per second; 0 = none. */
  bitsPerSecond: number;
  /** Loss probability per wire segment, 0…1. */
  loss: number;
  /** Bottleneck queue limit in bytes (only with a rate cap): a packet that finds more waiting is dropped. */
  limitBytes: number;
}

/**
 * The queue limit a link gets unless told: two bandwidth-delay products, at least 1 MiB. (One BDP
 * drops the bursts a descheduled delay-line thread reads at once on a busy host.)
 */
export function defaultLimitBytes(bitsPerSecond: number, rttMs: number): number {
  return Math.max(1 << 20, Math.round(((bitsPerSecond / 8) * rttMs * 2) / 1000));
}

/**
 * Probability that a GSO super-packet of `segments` wire segments is lost when each segment is lost
 * with probability `p`: the delay line drops the super-packet as a whole.
 */
export function superPacketLoss(p: number, segments: number): number {
  if (p <= 0) return 0;
  return 1 - (1 - p) ** Math.max(1, segments);
}

/** Serialisation and propagation: the time (ms) each admitted packet leaves the far end. */
export class LinkClock {
  private txFreeMs = 0;
  private readonly bytesPerMs: number;
  constructor(private readonly p: LinkParams) {
    this.bytesPerMs = p.bitsPerSecond / 8 / 1000;
  }
  /** Bytes still waiting to be serialised at `nowMs`. */
  backlog(nowMs: number): number {
    if (!this.bytesPerMs) return 0;
    return Math.max(0, this.txFreeMs - nowMs) * this.bytesPerMs;
  }
  /** The departure time of a packet of `bytes` arriving at `nowMs`, or -1 when the queue is full. */
  admit(nowMs: number, bytes: number): number {
    if (!this.bytesPerMs) return nowMs + this.p.delayMs;
    if (this.backlog(nowMs) + bytes > this.p.limitBytes) return -1;
    this.txFreeMs = Math.max(nowMs, this.txFreeMs) + bytes / this.bytesPerMs;
    return this.txFreeMs + this.p.delayMs;
  }
}

/**
 * A FIFO of packets held in one byte ring: each packet is read straight into the ring (no copy) and
 * stays there until it is due. `reserve()` gives a slot of `max` contiguous bytes or -1 when full.
 */
export class PacketRing {
  readonly bytes: Uint8Array;
  private readonly off: Int32Array;
  private readonly len: Int32Array;
  private readonly due: Float64Array;
  private first = 0;
  private count = 0;
  private head = 0;
  constructor(
    size: number,
    private readonly max: number,
    private readonly capacity = 65536,
  ) {
    this.bytes = new Uint8Array(size);
    this.off = new Int32Array(capacity);
    this.len = new Int32Array(capacity);
    this.due = new Float64Array(capacity);
  }
  get length(): number {
    return this.count;
  }
  /** Offset of a free region of `max` bytes, or -1. */
  reserve(): number {
    if (this.count === this.capacity) return -1;
    if (this.count === 0) {
      this.head = 0;
      return 0;
    }
    const tail = this.off[this.first];
    if (this.head >= tail) {
      if (this.bytes.length - this.head >= this.max) return this.head;
      return tail > this.max ? 0 : -1;
    }
    return tail - this.head > this.max ? this.head : -1;
  }
  /** Queues the packet just read into the slot at `offset`. */
  push(offset: number, length: number, dueMs: number): void {
    const i = (this.first + this.count) % this.capacity;
    this.off[i] = offset;
    this.len[i] = length;
    this.due[i] = dueMs;
    this.count++;
    this.head = offset + length;
  }
  /** Due time of the oldest packet, or Infinity. */
  nextDue(): number {
    return this.count ? this.due[this.first] : Number.POSITIVE_INFINITY;
  }
  /** The oldest packet's bytes (a view into the ring). */
  peek(): Uint8Array {
    const o = this.off[this.first];
    return this.bytes.subarray(o, o + this.len[this.first]);
  }
  shift(): void {
    this.first = (this.first + 1) % this.capacity;
    this.count--;
  }
}

/** Indices into a direction's stats array, which the delay line's thread fills and delayline.ts reads. */
export const STAT = {
  packetsIn: 0,
  bytesIn: 1,
  packetsOut: 2,
  bytesOut: 3,
  lost: 4,
  queueDrops: 5,
  gsoPackets: 6,
  maxSegments: 7,
  writeErrors: 8,
  size: 9,
} as const;
