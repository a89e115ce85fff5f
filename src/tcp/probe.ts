// The adaptive reader's knee finder (issue 45): which read-size cap and whether to poll, learned on the
// connection from what it measures, the way a congestion controller probes for bandwidth. Pure: the
// reader tells it each read (a monotonic time in µs and the bytes), and asks it for the arm to use.
//
// Why learn it: the best read size and the worth of polling are the host's (its caches, what a wake-up
// costs, a VM's exits), not the code's. Constants tuned on one VM (a 256 KiB cap, polling after 256 MiB)
// drained at 0.85–1.14 × a C read(64K) loop there and at 0.63–0.73 × on the next host of the same
// kind, where a fixed 64 KiB read reached C's speed.
//
// How: an arm is (cap, poll): the sizer grows a hot stream's reads up to the cap, and poll says whether
// the reader polls (src/tcp/poll.ts). While the stream is hot (its reads have grown to HOT_BYTES), time
// is cut into epochs of at least EPOCH_US and EPOCH_READS reads, and an epoch's cost is its wall time per
// byte. The prober holds its arm for `hold` epochs, then compares it with one neighbour (polling switched,
// the cap doubled, the cap halved), the neighbours taken in turn: eight epochs in the order
// N C C N N C C N (ABBA twice, so a drift in the host's speed weighs on both alike), four paired ratios
// of cost, neighbour ÷ current. When their median is below 1 − MARGIN the neighbour becomes the arm, and
// the next probe tries the same direction again (a knee is found by walking to it); otherwise the hold
// doubles, up to HOLD_MAX epochs, so a settled stream spends about 4 epochs in 70 on a neighbour (a
// neighbour 20 % slower costs a settled stream about 1 %). An epoch interrupted by a pause of the sender
// (no read for GAP_US, then a small read) is dropped, and so is a probe that was split by one: it
// measured the sender, not the arm.

/** The shortest epoch: a few scheduler ticks' worth of reads would be too short to time (µs). */
export const EPOCH_US = 2000;
/** …and at least this many reads. */
export const EPOCH_READS = 8;
/** No read for this long (µs), then a small read: the sender paused, and the epoch under way is dropped. */
export const GAP_US = 1000;
/** A neighbour replaces the arm when its median paired cost is below 1 − MARGIN of the arm's. */
export const MARGIN = 0.03;
/** The hold after a move, and its bound (epochs). */
export const HOLD_MIN = 8;
export const HOLD_MAX = 64;
/** The prober runs once the sizer has grown the reads to this size (a stream that outruns small reads). */
export const HOT_BYTES = 32 * 1024;
/** The order of a probe's epochs: N = the neighbour, C = the current arm. */
const ORDER = 'NCCNNCCN';

export interface Arm {
  /** The read-size cap: the sizer grows no further. */
  cap: number;
  /** Whether the reader polls while the stream is hot. */
  poll: boolean;
}

type Move = 'up' | 'down' | 'poll';
// polling first: whether it pays is the largest difference between hosts (what a wake-up costs)
const MOVES: readonly Move[] = ['poll', 'up', 'down'];

export interface ProbeBounds {
  /** The smallest and largest cap (powers of two apart from `max`, which bounds the doublings). */
  min: number;
  max: number;
  /** The first cap. */
  initial: number;
  /** Whether polling is one of the arms (false: never polls). */
  canPoll: boolean;
}

/** Pure: the arm a hot stream reads with, probed and moved as its epochs' costs say. */
export class ReadProbe {
  arm: Arm;
  /** Probes run and moves made (for stats, tests and benchmarks). */
  probes = 0;
  moves = 0;
  private readonly bounds: ProbeBounds;
  private hold = HOLD_MIN;
  private held = 0;
  private next = 0;
  /** The probe under way: the neighbour, its direction, and the costs of its epochs so far. */
  private probe: { arm: Arm; move: Move; costs: number[] } | null = null;
  private epochStart = -1;
  private epochReads = 0;
  private epochBytes = 0;
  private last = Number.NEGATIVE_INFINITY;

  constructor(bounds: ProbeBounds) {
    this.bounds = bounds;
    this.arm = { cap: bounds.initial, poll: false };
  }

  /** The arm the next read uses: the probe's epoch's, or the held one. */
  get current(): Arm {
    const p = this.probe;
    if (p && ORDER[p.costs.length] === 'N') return p.arm;
    return this.arm;
  }

  /**
   * Records a read of `n` bytes at `t` (µs), `size` being the buffer it went into; returns true when
   * the arm to use changed.
   */
  read(t: number, n: number, size: number): boolean {
    const gap = t - this.last;
    this.last = t;
    // A gap ended by a read of less than half the buffer was the sender's pause (the first bytes after
    // it woke the reader); one ended by a big read was the reader's own delay (descheduled on a busy
    // host, or its application busy): the bytes waited for it, and that is part of the arm's cost.
    if (size < Math.min(HOT_BYTES, this.bounds.max) || (gap > GAP_US && n < size / 2)) {
      // not hot, or back from a pause: start over (a probe split by a pause measured the pause)
      const was = this.current;
      this.epochStart = -1;
      this.probe = null;
      return was !== this.current;
    }
    if (this.epochStart < 0) {
      this.epochStart = t;
      this.epochReads = 0;
      this.epochBytes = 0;
      return false;
    }
    this.epochReads++;
    this.epochBytes += n;
    const elapsed = t - this.epochStart;
    if (elapsed < EPOCH_US || this.epochReads < EPOCH_READS) return false;
    const cost = elapsed / this.epochBytes;
    this.epochStart = t;
    this.epochReads = 0;
    this.epochBytes = 0;
    return this.epoch(cost);
  }

  /** An epoch ended with this cost (µs per byte). */
  private epoch(cost: number): boolean {
    const p = this.probe;
    if (p === null) {
      if (++this.held < this.hold) return false;
      this.held = 0;
      return this.startProbe();
    }
    p.costs.push(cost);
    if (p.costs.length < ORDER.length) return ORDER[p.costs.length] !== ORDER[p.costs.length - 1];
    this.probe = null;
    this.probes++;
    const ratios: number[] = [];
    for (let i = 0; i < ORDER.length; i += 2) {
      const [a, b] = [p.costs[i], p.costs[i + 1]];
      ratios.push(ORDER[i] === 'N' ? a / b : b / a);
    }
    if (medianOf(ratios) < 1 - MARGIN) {
      this.arm = p.arm;
      this.moves++;
      this.hold = HOLD_MIN;
      this.next = MOVES.indexOf(p.move); // walk on the same way first
    } else {
      this.hold = Math.min(this.hold * 2, HOLD_MAX);
    }
    return ORDER[ORDER.length - 1] === 'N';
  }

  /** Starts a probe of the next neighbour that exists; returns whether the arm to use changed. */
  private startProbe(): boolean {
    for (let i = 0; i < MOVES.length; i++) {
      const move = MOVES[(this.next + i) % MOVES.length];
      const arm = this.neighbour(move);
      if (arm === null) continue;
      this.next = (this.next + i + 1) % MOVES.length;
      this.probe = { arm, move, costs: [] };
      return ORDER[0] === 'N';
    }
    return false;
  }

  private neighbour(move: Move): Arm | null {
    const { cap, poll } = this.arm;
    const { min, max, canPoll } = this.bounds;
    if (move === 'up') return cap < max ? { cap: Math.min(cap * 2, max), poll } : null;
    if (move === 'down') {
      const lower = Math.max(Math.min(HOT_BYTES, max), min);
      return cap > lower ? { cap: Math.max(cap >>> 1, lower), poll } : null;
    }
    return canPoll ? { cap, poll: !poll } : null;
  }
}

function medianOf(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
