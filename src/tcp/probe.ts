// The adaptive reader's knee finder (issue 45): which read-size cap and whether to poll, learned on the
// connection from what it measures, the way a congestion controller probes for bandwidth. Pure: the
// reader tells it each read (its bytes, and a clock it calls where an epoch starts or ends), and asks it
// for the arm to use.
//
// Why learn it: the best read size and the worth of polling are the host's (its caches, what a wake-up
// costs, a VM's exits), not the code's. Constants tuned on one VM (a 256 KiB cap, polling after 256 MiB)
// drained at 0.85–1.14 × a C read(64K) loop there and at 0.63–0.73 × on the next host of the same
// kind, where a fixed 64 KiB read reached C's speed.
//
// How: an arm is (cap, poll): the sizer grows a hot stream's reads up to the cap, and poll says whether
// the reader polls (src/tcp/poll.ts). While the stream is hot (its reads have grown to HOT_BYTES), time
// is cut into epochs, each a count of reads long enough to last EPOCH_US (learned: the count doubles while
// epochs come out shorter), and an epoch's cost is its wall time per byte; the clock is read only where
// an epoch starts or ends (performance.now() took 70 ns here, ~0.6 % of a 64 KiB read; its cost
// is the host's). The prober holds its arm for `hold` epochs, then compares it with one neighbour (polling
// switched, the cap doubled, the cap halved), the neighbours taken in turn: eight epochs in the order
// N C C N N C C N (ABBA twice, so a drift in the host's speed weighs on both alike), four paired ratios
// of cost, neighbour ÷ current. A probe wins when all four ratios are below 1 and their median below
// 1 − MARGIN; a neighbour becomes the arm only when it wins twice in a row (the second probe follows the
// first at once), and the next probe tries the same direction again (a knee is found by walking to it);
// otherwise the hold doubles, up to HOLD_MAX epochs, so a settled stream spends about one epoch in 130 on
// a worse neighbour. Why so strict: on a VM an epoch's cost jitters by tens of per cent (a host's tick,
// another guest), and a median-only rule moved 6 times in 11 probes of one 2 GiB stream whose best arm
// was where it started (fixed:64K drained at 0.98 × C there, the walking reader at 0.72): each false
// move is paid until the next probe undoes it. Four ratios all below 1 by chance is 1 in 16, twice
// running 1 in 256. A probe ends at the first pair that is not below 1 (it can no longer win), so a
// neighbour clearly worse costs one epoch, not four. A sender's pause inside an epoch weighs on one
// ratio only, which the rule does not let decide. The first hold (HOLD_MIN epochs, ~32 ms)
// and its doubling bound what exploring costs a short stream: a 2 GiB drain at 6 GB/s lasts ~170 epochs.

/** The shortest epoch: a few scheduler ticks' worth of reads would be too short to time (µs). */
export const EPOCH_US = 2000;
/** An epoch is a count of reads, at least this many, doubled while an epoch is shorter than EPOCH_US. */
export const EPOCH_READS = 8;
const EPOCH_READS_MAX = 1 << 16;
/** A neighbour replaces the arm when its median paired cost is below 1 − MARGIN of the arm's. */
export const MARGIN = 0.03;
/** The hold after a move, and its bound (epochs). */
export const HOLD_MIN = 16;
export const HOLD_MAX = 128;
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
  /** The first hold and the hold after a move, in epochs (default HOLD_MIN; the reader's priming uses 1). */
  hold?: number;
}

/** Pure: the arm a hot stream reads with, probed and moved as its epochs' costs say. */
export class ReadProbe {
  arm: Arm;
  /** Probes run and moves made (for stats, tests and benchmarks). */
  probes = 0;
  moves = 0;
  private readonly bounds: ProbeBounds;
  private readonly holdMin: number;
  private hold: number;
  private held = 0;
  private next = 0;
  /** The probe under way: the neighbour, its direction, the costs of its epochs so far, and whether it is the confirming one. */
  private probe: { arm: Arm; move: Move; costs: number[]; confirming: boolean } | null = null;
  private epochStart = 0;
  private epochBytes = 0;
  /** Reads per epoch, learned: doubled while an epoch is shorter than EPOCH_US, halved past 8 ×. */
  private epochReads = EPOCH_READS;
  /** Reads left in the epoch under way (0 or less: none under way). */
  private left = 0;

  constructor(bounds: ProbeBounds) {
    this.bounds = bounds;
    this.arm = { cap: bounds.initial, poll: false };
    this.holdMin = bounds.hold ?? HOLD_MIN;
    this.hold = this.holdMin;
  }

  /** The arm the next read uses: the probe's epoch's, or the held one. */
  get current(): Arm {
    const p = this.probe;
    if (p && ORDER[p.costs.length] === 'N') return p.arm;
    return this.arm;
  }

  /**
   * Records a read of `n` bytes, `size` being the buffer it went into; `now` (µs, monotonic) is called
   * only on the reads that start or end an epoch. Returns true where the arm to use may have changed:
   * at every epoch's end (so the reader applies `current` there, changed or not: the same code every few
   * milliseconds, which the JIT has seen run long before the prober first moves; see Reader.prime), and
   * when a stream stops being hot.
   */
  read(n: number, size: number, now: () => number): boolean {
    if (size < Math.min(HOT_BYTES, this.bounds.max)) {
      // not hot (request-sized reads): start over
      const was = this.current;
      this.left = 0;
      this.probe = null;
      return was !== this.current;
    }
    if (--this.left > 0) {
      this.epochBytes += n;
      return false;
    }
    // the only reads that look at the clock: what a clock read costs is the host's too
    const t = now();
    if (this.left < 0) {
      // none under way: this read's bytes came before the epoch began
      this.epochStart = t;
      this.epochBytes = 0;
      this.left = this.epochReads;
      return false;
    }
    const elapsed = t - this.epochStart;
    const bytes = this.epochBytes + n;
    this.epochStart = t;
    this.epochBytes = 0;
    if (elapsed < EPOCH_US) {
      // too short to time: longer epochs from now on, this one not counted
      this.epochReads = Math.min(this.epochReads * 2, EPOCH_READS_MAX);
      this.left = this.epochReads;
      return false;
    }
    if (elapsed > 8 * EPOCH_US) this.epochReads = Math.max(this.epochReads >>> 1, EPOCH_READS);
    this.left = this.epochReads;
    this.epoch(elapsed / bytes);
    return true;
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
    const k = p.costs.length;
    if (k % 2 === 0 && pairRatio(p.costs, k - 2) >= 1) {
      // this pair already loses it (a win needs every pair below 1): back to the arm at once, so a
      // neighbour that is clearly worse costs one epoch, not four
      this.probe = null;
      this.probes++;
      this.hold = Math.min(this.hold * 2, HOLD_MAX);
      return ORDER[k - 1] === 'N';
    }
    if (k < ORDER.length) return ORDER[k] !== ORDER[k - 1];
    this.probe = null;
    this.probes++;
    const ratios: number[] = [];
    for (let i = 0; i < ORDER.length; i += 2) ratios.push(pairRatio(p.costs, i));
    if (Math.max(...ratios) < 1 && medianOf(ratios) < 1 - MARGIN) {
      if (!p.confirming) {
        // won once: probe the same neighbour again at once; it becomes the arm only if it wins again
        this.probe = { arm: p.arm, move: p.move, costs: [], confirming: true };
        return ORDER[ORDER.length - 1] !== ORDER[0];
      }
      this.arm = p.arm;
      this.moves++;
      this.hold = this.holdMin;
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
      this.probe = { arm, move, costs: [], confirming: false };
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

/** The paired ratio of cost, neighbour ÷ current, of the epochs at i and i + 1. */
function pairRatio(costs: number[], i: number): number {
  const [a, b] = [costs[i], costs[i + 1]];
  return ORDER[i] === 'N' ? a / b : b / a;
}

function medianOf(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
