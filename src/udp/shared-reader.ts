// The main thread's side of the one reader thread per process (shared-reader.worker.ts): it makes
// the epoll set and the eventfd, starts the thread on first need and keeps it until the last socket
// that may use it is gone, watches and releases sockets, and runs the one loop that takes the shared
// ring's entries and hands each to its socket. The thread is never what keeps the process alive
// (unref'd): the sockets decide that, as node:dgram's do.
import type { Worker } from 'node:worker_threads';
import { SysError } from '../errors.js';
import { dupCloexec, epollAdd, epollCreate, eventFd, eventFdSignal } from '../sys/epoll.js';
import { closeFd } from '../sys/socket.js';
import { spawnWorker, type WorkerFailureMessage, workerFailure } from '../sys/worker.js';
import { used } from './ring.js';
import {
  BATCH,
  COMMANDS,
  ENTRIES,
  LIFE,
  NAME,
  OP,
  SCOUNT,
  SCTRL,
  type SharedRingData,
  SLOTS,
  sharedRingData,
  slotOf,
  WAKE_ID,
} from './shared-ring.js';

/** One ring entry as a socket sees it: valid only while its onBatch runs. */
export interface SharedBatch {
  count: number;
  /** When the reader took it (wall-clock µs, clock.ts). */
  timeUs: number;
  /** Datagram i: its length (0xffffffff: truncated), its bytes, its sender (sockaddr bytes). */
  lengths: Uint32Array;
  data: Buffer;
  names: Buffer;
  /** Where datagram i starts in data, and its sockaddr in names. */
  dataOffset(i: number): number;
  /** When datagram i reached the kernel's queue (clock.ts µs; 0: not stamped, read while the socket had no bound). */
  arrivalUs(i: number): number;
  nameOffset(i: number): number;
}

/** What a socket gives the reader: where its batches, its errors and its release go. */
export interface ReaderSink {
  onBatch(b: SharedBatch): void;
  /** A receive failed (−errno): ECONNREFUSED after an ICMP error on a connected socket … */
  onReceiveError(negErrno: number): void;
  /** Every batch taken before release() was handed over; the socket is the main thread's again. */
  onReleased(): void;
  /** The reader thread failed: the socket is the main thread's again. */
  onReaderFailed(e: Error): void;
}

/** How long the thread outlives the last socket (a process that opens one socket per request keeps it). */
const LINGER_MS = 2000;
/** The longest the loop takes ring entries before it lets the event loop turn (timers, other I/O). */
const TURN_MS = 1;
/**
 * The longest the process's exit waits for the thread to leave its loop (shared-ring.ts's LIFE): it
 * takes well under a millisecond (its epoll_wait is woken, its round has at most MAX_EVENTS reads),
 * or the ~10 ms of koffi's load when the exit comes while the thread starts.
 */
const EXIT_WAIT_MS = 2000;

class SharedReader {
  private readonly d: SharedRingData;
  private readonly ctrl: Int32Array;
  private readonly ids: Int32Array;
  private readonly counts: Int32Array;
  private readonly times: Float64Array;
  private readonly lengths: Uint32Array;
  private readonly offsets: Uint32Array;
  private readonly arrivals: Float64Array;
  private readonly data: Buffer;
  private readonly names: Buffer;
  private readonly commands: Int32Array;
  private readonly dropWhenFull: Uint8Array;
  private readonly counters: Float64Array;
  private readonly sinks = new Map<number, ReaderSink>();
  private readonly freeSlots: number[] = [];
  private readonly generation = new Uint16Array(SLOTS);
  private nextSlot = 0;
  /** Sockets that may use the thread (bound and open), whatever their mode. */
  private users = 0;
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private running = false;
  private failed: Error | undefined;
  private consuming = false;
  /** The previous thread's exit, when it was told to exit: a new one starts after it. */
  private exiting: Promise<void> | undefined;
  private linger: NodeJS.Timeout | undefined;
  /** Whether a socket ever asked for the thread (start()), not only the preload (prestart()). */
  private wanted = false;
  /** The process is exiting: no thread starts any more. */
  private ending = false;

  constructor() {
    const epfd = epollCreate();
    if (epfd < 0) throw new SysError('epoll_create1', -epfd);
    const evfd = eventFd();
    if (evfd < 0) {
      closeFd(epfd);
      throw new SysError('eventfd', -evfd);
    }
    const r = epollAdd(epfd, evfd, WAKE_ID);
    if (r < 0) throw new SysError('epoll_ctl', -r);
    this.d = sharedRingData(epfd, evfd);
    this.ctrl = new Int32Array(this.d.ctrl);
    this.ids = new Int32Array(this.d.ids);
    this.counts = new Int32Array(this.d.counts);
    this.times = new Float64Array(this.d.times);
    this.lengths = new Uint32Array(this.d.lengths);
    this.offsets = new Uint32Array(this.d.offsets);
    this.arrivals = new Float64Array(this.d.arrivals);
    this.data = Buffer.from(this.d.data);
    this.names = Buffer.from(this.d.names);
    this.commands = new Int32Array(this.d.commands);
    this.dropWhenFull = new Uint8Array(this.d.dropWhenFull);
    this.counters = new Float64Array(this.d.counters);
    // before any other 'exit' listener (one that throws would skip the rest)
    process.prependOnceListener('exit', () => this.stopForExit());
  }

  /**
   * At process exit, before Node stops the thread: a thread that has not claimed its life never
   * will; one that runs is asked to stop and waited for until it makes no more koffi calls
   * (shared-ring.ts's LIFE). Node's own stop would otherwise land in one and abort the process.
   */
  private stopForExit(): void {
    this.ending = true;
    const { ctrl } = this;
    for (;;) {
      const life = Atomics.load(ctrl, SCTRL.LIFE);
      if (life !== LIFE.NEW && life !== LIFE.RUNNING) break;
      if (Atomics.compareExchange(ctrl, SCTRL.LIFE, life, LIFE.STOP) !== life) continue;
      if (life === LIFE.NEW) return;
      eventFdSignal(this.d.evfd);
      break;
    }
    const end = performance.now() + EXIT_WAIT_MS;
    while (Atomics.load(ctrl, SCTRL.LIFE) === LIFE.STOP) {
      const left = end - performance.now();
      if (left <= 0) return;
      Atomics.wait(ctrl, SCTRL.LIFE, LIFE.STOP, left);
    }
  }

  /**
   * A bound socket: count it. The thread starts when a socket first needs it (start()) and lives
   * while any socket is counted, and LINGER_MS after the last one.
   */
  hold(): void {
    this.users++;
    clearTimeout(this.linger);
    this.linger = undefined;
  }

  /** A socket closed: LINGER_MS after the last one, the thread exits. */
  unhold(): void {
    if (--this.users > 0 || !this.worker) return;
    this.linger = setTimeout(() => this.exit(), LINGER_MS);
    this.linger.unref();
  }

  /** The thread exits: with no socket counted, or (`unwanted`) with none that ever asked for it. */
  private exit(unwanted = false): void {
    this.linger = undefined;
    const w = this.worker;
    if ((this.users > 0 && !unwanted) || !w) return;
    this.exiting = new Promise<void>((r) => w.once('exit', () => r()));
    this.command(OP.EXIT, -1, 0);
    this.worker = undefined;
    this.ready = undefined;
    this.running = false;
  }

  /** Starts the thread (once) for a socket that needs it; resolves when it reads. Rejects with why it could not. */
  start(): Promise<void> {
    this.wanted = true;
    return this.launch();
  }

  /**
   * Starts the thread before any socket needs it (the preload does, at process start: its ~100 ms
   * start-up then lands in the application's own, not in a flood on its first socket). Unless a
   * socket asks for it (start()) within LINGER_MS of its running, it exits again: a process with
   * client sockets at low rates keeps no thread, as without the preload.
   */
  prestart(): void {
    if (this.ready || this.failed) return;
    this.launch().then(
      () => setTimeout(() => this.wanted || this.exit(true), LINGER_MS).unref(),
      () => {}, // a socket that needs the thread later gets the reason from start()
    );
  }

  private launch(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.ending)
      return Promise.reject(workerFailure('sockbuf/dgram', { error: 'the process is exiting' }));
    const after = this.exiting ?? Promise.resolve();
    this.ready ??= after.then(() => this.spawn());
    return this.ready;
  }

  private spawn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // the previous thread, if any, has exited: this one's life begins
      Atomics.store(this.ctrl, SCTRL.LIFE, LIFE.NEW);
      const w = spawnWorker(new URL('./shared-reader.worker', import.meta.url), { workerData: this.d });
      this.worker = w;
      w.on('message', (m: { ready?: boolean; error?: string; errno?: number; syscall?: string }) => {
        if (m.ready) {
          w.unref(); // again: Node refs a starting worker's port until it runs
          this.running = true;
          resolve();
        } else if (m.error)
          this.fail(workerFailure('sockbuf/dgram: reader thread', m as WorkerFailureMessage), reject);
      });
      w.on('error', (e) => this.fail(workerFailure('sockbuf/dgram: reader thread', e), reject));
      w.once('exit', (code) => {
        if (this.worker === w)
          this.fail(workerFailure('sockbuf/dgram', { error: `reader thread exited (code ${code})` }), reject);
      });
    });
  }

  private fail(e: Error, reject: (e: Error) => void): void {
    this.failed = e;
    this.running = false;
    reject(e);
    for (const [id, s] of [...this.sinks]) {
      this.sinks.delete(id);
      s.onReaderFailed(e);
    }
  }

  /** Whether the thread runs now (a socket may hand its fd over without waiting). */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Hands `fd` to the thread (it must be running); returns the socket's id. `bounded`: the socket has
   * a queue bound (its datagrams are dropped when the ring is full, and stamped with their arrival:
   * it must have SO_TIMESTAMPNS on).
   */
  watch(fd: number, sink: ReaderSink, bounded: boolean): number {
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    if (slot >= SLOTS) throw new RangeError(`sockbuf/dgram: more than ${SLOTS} sockets on the reader thread`);
    const gen = (this.generation[slot] + 1) & 0x7fff;
    this.generation[slot] = gen;
    const id = slot | (gen << 16);
    this.dropWhenFull[slot] = bounded ? 1 : 0;
    this.counters.fill(0, slot * SCOUNT.SIZE, (slot + 1) * SCOUNT.SIZE);
    const r = epollAdd(this.d.epfd, fd, id);
    if (r < 0) {
      this.freeSlots.push(slot);
      throw new SysError('epoll_ctl', -r);
    }
    this.sinks.set(id, sink);
    if (!this.consuming) void this.consume();
    return id;
  }

  /** The socket watched as `id` has a queue bound from now on (see watch()). */
  bound(id: number): void {
    if (this.sinks.has(id)) this.dropWhenFull[slotOf(id)] = 1;
  }

  /** Gives `fd` back: what the thread took before is handed over first, then sink.onReleased(). */
  release(id: number, fd: number): void {
    this.command(OP.RELEASE, fd, id);
  }

  /** Closes `fd` (watched as `id`) in the thread, after its current round; nothing more is handed over. */
  close(id: number, fd: number): void {
    this.forget(id);
    this.command(OP.CLOSE, fd, id);
  }

  private forget(id: number): void {
    if (!this.sinks.delete(id)) return;
    this.freeSlots.push(slotOf(id));
  }

  /** What the thread dropped and truncated for `id`. */
  counts_(id: number): { drops: number; truncated: number } {
    const b = slotOf(id) * SCOUNT.SIZE;
    return { drops: this.counters[b + SCOUNT.DROPS], truncated: this.counters[b + SCOUNT.TRUNCATED] };
  }

  /** At least `boost` nice levels above the process (the most any socket asked for). */
  raisePriority(boost: number): void {
    if (boost > Atomics.load(this.ctrl, SCTRL.NICE_BOOST)) {
      Atomics.store(this.ctrl, SCTRL.NICE_BOOST, boost);
      eventFdSignal(this.d.evfd);
    }
  }

  private command(op: number, fd: number, id: number): void {
    const h = Atomics.load(this.ctrl, SCTRL.CMD_HEAD);
    if (h - Atomics.load(this.ctrl, SCTRL.CMD_TAIL) >= COMMANDS) {
      // the thread is behind on commands: should never happen; close in the open rather than leak
      if (op === OP.CLOSE) closeFd(fd);
      return;
    }
    const c = (h % COMMANDS) * 3;
    this.commands[c] = op;
    this.commands[c + 1] = fd;
    this.commands[c + 2] = id;
    Atomics.store(this.ctrl, SCTRL.CMD_HEAD, h + 1);
    eventFdSignal(this.d.evfd);
  }

  private batchAt(e: number, count: number): SharedBatch {
    const base = e * BATCH;
    return {
      count,
      timeUs: this.times[e],
      lengths: this.lengths.subarray(base, base + count),
      data: this.data,
      names: this.names,
      dataOffset: (i) => this.offsets[base + i],
      arrivalUs: (i) => this.arrivals[base + i],
      nameOffset: (i) => (base + i) * NAME,
    };
  }

  /** The one consumer: takes each committed entry, hands it to its socket, lets the loop run between. */
  private async consume(): Promise<void> {
    this.consuming = true;
    const { ctrl } = this;
    try {
      for (;;) {
        const seen = Atomics.load(ctrl, SCTRL.NOTIFY);
        const tail = Atomics.load(ctrl, SCTRL.TAIL);
        if (used(Atomics.load(ctrl, SCTRL.HEAD), tail) > 0) {
          // a busy reader must not hold timers and other I/O off: one turn of the loop per TURN_MS
          // of entries, not one per entry
          const until = performance.now() + TURN_MS;
          let t = tail;
          do {
            this.take(t % ENTRIES);
            t++;
            Atomics.store(ctrl, SCTRL.TAIL, t);
            Atomics.notify(ctrl, SCTRL.TAIL);
          } while (used(Atomics.load(ctrl, SCTRL.HEAD), t) > 0 && performance.now() < until);
          if (used(Atomics.load(ctrl, SCTRL.HEAD), t) > 0) await new Promise(setImmediate);
          continue;
        }
        if (this.sinks.size === 0) return;
        // biome-ignore lint/suspicious/noExplicitAny: Atomics.waitAsync is not in the ES2023 lib
        const w = (Atomics as any).waitAsync(ctrl, SCTRL.NOTIFY, seen);
        if (w.async) await w.value;
      }
    } finally {
      this.consuming = false;
    }
  }

  private take(e: number): void {
    const id = this.ids[e];
    const count = this.counts[e];
    const sink = this.sinks.get(id);
    if (!sink) return;
    try {
      if (count === 0) {
        this.forget(id);
        sink.onReleased();
      } else if (count < 0) sink.onReceiveError(count);
      else sink.onBatch(this.batchAt(e, count));
    } catch (err) {
      // a listener's exception surfaces as it would from node:dgram's callback, outside this loop
      process.nextTick(() => {
        throw err;
      });
    }
  }
}

let reader: SharedReader | undefined;

/** The process's reader (made on first use; the thread starts on reader().start()). */
export function sharedReader(): SharedReader {
  reader ??= new SharedReader();
  return reader;
}

export type { SharedReader };
export { dupCloexec };
