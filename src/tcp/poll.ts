// Polling while a stream outruns its reader (issue 25). A reader that sleeps until the kernel wakes it
// makes every arrival pay for a wake-up, and on loopback the sender pays: it runs the receiving TCP's
// code too, and waking a CPU that has gone idle is an inter-processor interrupt (in a VM, an exit to the
// host). While a stream is hot, the adaptive reader keeps the event loop polling instead: a chain of
// setImmediate, with which libuv waits for I/O with a zero timeout, so the next bytes find the reader
// awake and nobody is woken. It stops once nothing has been read for a window, and the window adapts
// the way the kernel's haltpoll adapts its own (drivers/cpuidle/governors/haltpoll.c): an arrival that
// came soon after polling stopped grows it, a long sleep shrinks it, so a stream whose reads come further
// apart than the bound never polls at all. The price is the reader's CPU, so it is capped: polling that
// spends more than two thirds of its time finding nothing (a stream much slower than the reader) rests
// for a while. So while it polls, the reader's CPU does at most 3 × what its reads take. Whether a stream
// polls is learned on the connection (src/tcp/probe.ts: polling is one of the prober's arms, kept only
// where it drained the stream faster), and by default only a loopback peer's stream may poll (pollBound
// in src/tcp/reader.ts): that is where the gain was measured.

/** The bound on the window by default: the kernel's haltpoll default (200 µs), which drained fastest here. */
export const POLL_DEFAULT_US = 200;
/**
 * Polling starts only after a read of at least this much: the reader's prober (src/tcp/probe.ts) runs on
 * reads this large (its HOT_BYTES), a stream that outruns small reads. Request/response traffic never
 * polls. Whether a hot stream polls at all is the prober's to learn: it tries polling as one of its arms.
 */
export const POLL_START_BYTES = 32 * 1024;
/** Polling's share of time that found nothing is judged over this span (µs)… */
export const POLL_SPAN_US = 10_000;
/** …and when more than two thirds of it found nothing, polling rests this long (µs). */
export const POLL_REST_US = 50_000;

/** Pure: when to poll, on a monotonic clock in µs. */
export class PollWindow {
  /** How long polling goes on after the last read; 0: do not poll. */
  window = 0;
  /** Spans after which polling rested (it found nothing more than two thirds of the time). */
  rests = 0;
  private last = Number.NEGATIVE_INFINITY;
  private restUntil = Number.NEGATIVE_INFINITY;
  private readSinceTurn = false;
  private lastTurn = 0;
  private span = 0;
  private idle = 0;

  /**
   * Records a read of `n` bytes at `t`, `bound` being the reader's bound on the window (µs); `polling`
   * says whether the loop was polling when it came. Returns whether polling should start now.
   */
  read(t: number, n: number, bound: number, polling: boolean): boolean {
    const gap = t - this.last;
    this.last = t;
    this.readSinceTurn = true;
    if (polling) return false;
    // the loop slept since the last read: would a longer window have caught this one?
    if (gap <= bound) this.window = Math.min(bound, Math.max(this.window * 2, bound / 4));
    else this.window = this.window / 2 < bound / 8 ? 0 : this.window / 2;
    if (this.window === 0 || n < POLL_START_BYTES || t < this.restUntil) return false;
    this.lastTurn = t; // the judged span adds up polling's time only, over as many starts as it takes
    return true;
  }

  /** A turn of polling at `t`: returns whether polling goes on. */
  turn(t: number): boolean {
    const dt = t - this.lastTurn;
    this.lastTurn = t;
    this.span += dt;
    if (!this.readSinceTurn) this.idle += dt;
    this.readSinceTurn = false;
    if (this.span >= POLL_SPAN_US) {
      const wasted = this.idle * 3 > this.span * 2;
      this.span = this.idle = 0;
      if (wasted) {
        this.restUntil = t + POLL_REST_US;
        this.rests++;
        return false;
      }
    }
    return t - this.last < this.window;
  }
}

/** The process's poller: one chain of setImmediate for every adaptive reader. */
class Poller {
  readonly window = new PollWindow();
  polling = false;
  /** Times polling started, and setImmediate turns taken (for tests and benchmarks). */
  starts = 0;
  turns = 0;
  private immediate: NodeJS.Immediate | null = null;

  private readonly turn = () => {
    this.turns++;
    if (this.window.turn(performance.now() * 1000)) this.immediate = setImmediate(this.turn);
    else this.stop();
  };

  /** A read of `n` bytes by a reader whose bound is `bound` µs (0: it does not poll now; nothing to do). */
  read(n: number, bound: number): void {
    // a reader that does not poll only calls this: the rest stays out of its inlined callback
    if (bound !== 0) this.polled(n, bound);
  }

  private polled(n: number, bound: number): void {
    if (this.window.read(performance.now() * 1000, n, bound, this.polling)) {
      this.polling = true;
      this.starts++;
      this.immediate = setImmediate(this.turn);
    }
  }

  /** Ends the chain, if one runs. */
  stop(): void {
    if (this.immediate) clearImmediate(this.immediate);
    this.immediate = null;
    this.polling = false;
  }
}

export const poller = new Poller();

/** What the process's poller has done: whether it polls now, its window, starts and turns. @internal (exported for its test) */
export function pollerStats(): {
  polling: boolean;
  windowUs: number;
  starts: number;
  turns: number;
  rests: number;
} {
  return {
    polling: poller.polling,
    windowUs: poller.window.window,
    rests: poller.window.rests,
    starts: poller.starts,
    turns: poller.turns,
  };
}
