// How a TCP socket's bytes reach JavaScript: the adaptive reader (seed 002), a fixed one, or Node's
// plain 'data' path (the baseline). The adaptive and fixed readers use net.Socket's `onread` with a
// buffer function, which Node calls after every read (measured on Node 20): the sizer decides the size of
// the next read, and each chunk is handed to the consumer synchronously, as a view.
//
// Adaptive readers all read into one process-wide buffer (each chunk is consumed before the next read
// anywhere in the process), so a socket holds no read buffer of its own: an idle connection costs a
// sizer's few numbers. A fixed reader owns its buffer, as `onread: { buffer: Buffer.alloc(n) }` does.
import type net from 'node:net';
import type { OnRead } from '../sys/socket.js';
import { POLL_DEFAULT_US, poller } from './poll.js';
import { type Arm, ReadProbe } from './probe.js';
import {
  DATA_READ_BYTES,
  formatReader,
  PROBE_START_BYTES,
  pollBound,
  type ReaderSpec,
  resolveReader,
} from './reader-spec.js';
import { AdaptiveSizer } from './sizer.js';

export * from './reader-spec.js';

/**
 * A monotonic clock in µs, for the prober (called once per epoch, not per read). `skewUs` is the
 * synthetic time of the JIT priming's stream (see Reader.prime): one clock, so the JIT sees one.
 */
let skewUs = 0;
const nowUs = (): number => performance.now() * 1000 + skewUs;

/** Whether the adaptive path's JIT has been primed in this process (see Reader.prime). */
let primed = false;

// ---- the shared buffer ----------------------------------------------------------------------------

/** One buffer for every adaptive reader in the process, as large as the largest max in use. */
class SharedReadBuffer {
  private buf = Buffer.alloc(0);
  private views = new Map<number, Buffer>();
  /** Counts reallocations: a reader whose size and generation are unchanged keeps its view. */
  generation = 0;

  /** A view of `size` bytes (cached: sizes come from a handful of doublings). */
  view(size: number): Buffer {
    let v = this.views.get(size);
    if (v === undefined) {
      if (size > this.buf.length) {
        // Sockets that were handed a view of the old buffer keep it alive until their next read.
        this.buf = Buffer.allocUnsafe(size);
        this.views.clear();
        this.generation++;
      }
      v = this.buf.subarray(0, size);
      this.views.set(size, v);
    }
    return v;
  }

  /** Lets the buffer go (the next view allocates one, and every reader takes a new view). */
  release(): void {
    this.buf = Buffer.alloc(0);
    this.views.clear();
    this.generation++;
  }

  get bytes(): number {
    return this.buf.length;
  }
}

const shared = new SharedReadBuffer();

/** Bytes held by the process-wide read buffer (for the idle benchmark). */
export function sharedReadBufferBytes(): number {
  return shared.bytes;
}

// ---- stats ----------------------------------------------------------------------------------------

/** A reader's statistics: bytes, reads, the mean read and the buffer size now. */
export interface ReaderStats {
  reader: string;
  reads: number;
  bytes: number;
  /** Reads that filled the buffer. */
  fullReads: number;
  /** The size the next read goes into. */
  sizeBytes: number;
  /** Read-buffer bytes this socket holds by itself (0 for adaptive: the buffer is shared). */
  ownBufferBytes: number;
  grows: number;
  shrinks: number;
  meanReadBytes: number;
  /** Reads by size: `le` is the bucket's upper bound in bytes (a power of two), `reads` the count. */
  readSizeHistogram: { le: number; reads: number }[];
  /**
   * The adaptive reader's learned arm (src/tcp/probe.ts), once it has read: the cap on its read size,
   * whether it polls, and how many probes it ran and moves it made.
   */
  probe?: { capBytes: number; polling: boolean; probes: number; moves: number };
}

/** Receives each chunk synchronously; the view is only valid during the call. May throw to close. */
export type Consumer = (chunk: Uint8Array) => void;

/** Counts and sizes the reads of one socket. */
export class Reader {
  readonly spec: ReaderSpec;
  reads = 0;
  bytes = 0;
  fullReads = 0;
  /** Where the bytes go; replace it at any time (e.g. after a handshake). */
  consumer: Consumer = () => {};
  private readonly sizer: AdaptiveSizer | null;
  private readonly own: Buffer | null;
  private readonly hist = new Array<number>(33).fill(0);
  private probe: ReadProbe | null = null;
  private socket: net.Socket | null = null;
  /** The prober's first hold in epochs: undefined (its default), or the priming run's 1 (see prime). */
  private hold: number | undefined = undefined;

  constructor(spec: ReaderSpec) {
    this.spec = spec;
    this.sizer =
      spec.kind === 'adaptive'
        ? new AdaptiveSizer({ min: spec.min, max: spec.max })
        : spec.kind === 'fixed'
          ? AdaptiveSizer.pinned(spec.size)
          : null;
    this.own = spec.kind === 'fixed' ? Buffer.allocUnsafe(spec.size) : null;
  }

  /**
   * The `onread` option for a net.Socket, or undefined for the 'data' reader. Per read it does only
   * what it must (measured in scripts/drain-bench.ts): a read that filled its buffer is handed over as
   * the buffer itself (no view made), and the buffer function, which Node calls after every read, makes a
   * view only when the size or the shared buffer changed.
   */
  onread(): OnRead | undefined {
    const sizer = this.sizer;
    if (sizer === null) return undefined;
    const spec = this.spec;
    if (spec.kind === 'adaptive' && !primed) Reader.prime();
    const hold = this.hold;
    // decided at the first read, when the peer is known (a client's socket is attached before it connects)
    let poll = spec.kind !== 'adaptive' ? 0 : spec.poll === 'loopback' ? -1 : spec.poll;
    let polls = false;
    const callback = (n: number, buf: Uint8Array): boolean => {
      const full = n >= buf.length;
      this.count(n, full);
      sizer.record(n);
      if (poll < 0) poll = pollBound(spec, this.socket?.remoteAddress);
      if (spec.kind === 'adaptive') {
        if (this.probe === null) {
          this.probe = new ReadProbe({
            min: sizer.min,
            max: sizer.max,
            initial: Math.min(Math.max(PROBE_START_BYTES, sizer.min), sizer.max),
            canPoll: poll > 0,
            hold,
          });
          sizer.limit(this.probe.arm.cap);
        }
        if (this.probe.read(n, buf.length, nowUs)) {
          sizer.limit(this.probe.current.cap);
          polls = this.probe.current.poll;
        }
      }
      poller.read(n, polls ? poll : 0);
      return this.deliver(full ? buf : buf.subarray(0, n));
    };
    if (this.own) return { buffer: this.own, callback };
    let size = 0;
    let generation = -1;
    let view: Buffer = Buffer.alloc(0);
    return {
      // the view every time, not undefined while unchanged: Node's onStreamRead stores what this returns,
      // and a store it had never run before the JIT compiled it (the prober's first new size) would throw
      // its optimized code away (see prime)
      buffer: () => {
        if (sizer.size !== size || shared.generation !== generation) {
          size = sizer.size;
          generation = shared.generation;
          view = shared.view(size);
        }
        return view;
      },
      callback,
    };
  }

  /** Ties the reader to its socket: the 'data' path listens here; errors from the consumer close it. */
  attach(socket: net.Socket): void {
    this.socket = socket;
    if (this.sizer === null) {
      socket.on('data', (chunk: Buffer) => {
        this.count(chunk.length, chunk.length >= DATA_READ_BYTES);
        if (this.deliver(chunk) === false) socket.pause();
      });
    }
  }

  private count(n: number, full: boolean): void {
    this.reads++;
    this.bytes += n;
    if (full) this.fullReads++;
    this.hist[n <= 1 ? 0 : 32 - Math.clz32(n - 1)]++;
  }

  private deliver(chunk: Uint8Array): boolean {
    try {
      this.consumer(chunk);
      return true;
    } catch (err) {
      this.socket?.destroy(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  /**
   * Primes V8 for the adaptive path, once per process, before the first adaptive reader reads. V8
   * optimizes the read callback for what it has seen run; the first time a read takes a path it had not
   * (the prober's first probe, its first move, polling switched on, a new read size), the optimized code
   * is thrown away ("insufficient type feedback") and reads run unoptimized until it is compiled again,
   * the compiler sharing the reader's CPU. On a 2 GiB loopback drain (drain-bench, one CPU for the sink)
   * each such deoptimization cost 50–80 ms at ~60 % of the optimized speed, two or three per stream: the
   * 8–10 % the prober's moves seemed to cost. So a synthetic stream walks every path once first, its
   * clock saying what each arm costs: a probe won and confirmed, a move, pairs lost, a probe tied,
   * polling on and off, caps up and down, epochs too short and too long, and a byte count past 2^31 (a
   * field outgrowing a small integer deoptimizes too). Its time is added to the prober's one clock
   * (skewUs): another clock function would be a second call target the JIT had not seen. It polls with
   * the process's poller (another poller's objects would not match what the JIT saw), starting and
   * stopping its chain on every read that polls (a path run once may run before V8 records anything),
   * and puts back its counts. Returns what it walked, for its test. @internal
   */
  static prime(): { reads: number; probes: number; moves: number; arms: string[] } {
    primed = true;
    const K = 1024;
    // µs per byte by arm: 128K reads 10 % cheaper than 64K (they win, and are moved to), 256K 1.5 %
    // cheaper than 128K (less than the 3 % a move needs: their probe runs out without a verdict), 64K
    // dearer, polling dearer still (its probes lose at once: a stream that polls for long would make
    // the JIT inline polling into the callback, a larger compile that every stream would wait for)
    const byCap: Record<number, number> = { 64: 1, 128: 0.9, 256: 0.9 * 0.985 };
    const cost = (a: Arm) => (a.poll ? 1.3 : 1) * (byCap[a.cap / K] ?? 1.3) * 0.0045;
    const r = new Reader(resolveReader({ adaptive: { poll: POLL_DEFAULT_US / 1e3 } }));
    r.bytes = 2 ** 31 + 0.5;
    r.hold = 1;
    const { starts, turns } = poller;
    const on = r.onread() as {
      buffer: () => Uint8Array | undefined;
      callback: (n: number, b: Uint8Array) => boolean;
    };
    const arms = new Set<string>();
    let arm: Arm | undefined;
    let buf = on.buffer() as Uint8Array;
    let synthetic = nowUs();
    while (r.reads < 2000 && (r.probe === null || r.probe.moves < 1 || r.probe.probes < 7)) {
      // each read takes the time its arm costs on the one clock the prober reads (the time this code
      // takes is left out); the first epochs go too fast and one read stalls: epochs too short and too long
      const pace = r.reads < 40 ? 0.2 : r.reads === 300 ? 50 : 1;
      synthetic += pace * buf.length * cost(arm ?? { cap: 64 * K, poll: false });
      skewUs = synthetic - performance.now() * 1000;
      on.callback(buf.length, buf);
      buf = on.buffer() ?? buf;
      if (poller.polling) {
        // what the chain's turns would do (one after a read, one that found nothing), then stop it, so
        // that the next read starts polling again
        const t = performance.now() * 1000;
        poller.window.turn(t);
        poller.window.turn(t + 1.5);
        poller.stop();
      }
      const a = (r.probe as ReadProbe).current;
      if (a !== arm) arms.add(`${a.cap / K}K${a.poll ? '+poll' : ''}`);
      arm = a;
    }
    poller.stop();
    Object.assign(poller, { starts, turns });
    shared.release(); // it grew to 256 KiB: a process holds what its own streams need
    skewUs = Math.max(skewUs, 0); // the clock goes on from where the synthetic stream left it, or now
    const p = r.probe as ReadProbe;
    return { reads: r.reads, probes: p.probes, moves: p.moves, arms: [...arms] };
  }

  stats(): ReaderStats {
    const s = this.sizer;
    return {
      reader: formatReader(this.spec),
      reads: this.reads,
      bytes: this.bytes,
      fullReads: this.fullReads,
      sizeBytes: s ? s.size : DATA_READ_BYTES,
      ownBufferBytes: this.own ? this.own.length : 0,
      grows: s ? s.grows : 0,
      shrinks: s ? s.shrinks : 0,
      meanReadBytes: this.reads ? this.bytes / this.reads : 0,
      readSizeHistogram: this.hist.flatMap((reads, i) => (reads ? [{ le: 2 ** i, reads }] : [])),
      ...(this.probe && {
        probe: {
          capBytes: this.probe.arm.cap,
          polling: this.probe.arm.poll,
          probes: this.probe.probes,
          moves: this.probe.moves,
        },
      }),
    };
  }
}
