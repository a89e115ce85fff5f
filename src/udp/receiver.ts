// The batched UDP receiver: one reader thread per socket does recvmmsg into a shared ring (see
// reader-worker.ts and ring.ts); JavaScript takes one batch per step of `for await`. The readers start
// when the application first asks for a batch (or calls start()): until then the kernel's receive
// buffer holds what comes. When the consumer falls behind and the ring is full, the reader waits and
// the kernel's buffer absorbs the burst (onFull 'wait', the default); with onFull 'drop' a full ring
// is drained into a scratch batch and counted as userspace drops. Kernel drops are read per socket
// from SO_MEMINFO. Life cycle as Node's own objects: close() is idempotent, leaving a `for await`
// closes, ref()/unref() as on a dgram socket, an AbortSignal closes.
import type { Worker } from 'node:worker_threads';
import { trackSource } from '../observe/tracked.js';
import { formatHostPort, type HostPort, parseListen } from '../policy/address.js';
import { applyUdpRcvbuf } from '../policy/apply.js';
import type { UdpRcvbufReport } from '../policy/buffers.js';
import { durationMs, EnvironmentError, parseSize, UsageError } from '../policy/units.js';
import { IPPROTO_UDP, SO_REUSEPORT, SOCK_DGRAM, SOL_SOCKET, UDP_GRO } from '../sys/constants.js';
import { SysError } from '../sys/errors.js';
import { CMSG_INT_SPACE, NAME_SIZE } from '../sys/mmsg.js';
import { decodeSockaddr, type Endpoint } from '../sys/sockaddr.js';
import { bindFd, closeFd, createSocket, localEndpoint, setIntOption } from '../sys/socket.js';
import { spawnWorker } from '../sys/worker.js';
import { MAX_SEGMENTS } from './gro.js';
import { observeUdpHost, udpKernelDrops } from './host.js';
import { groAvailable, groRefusal } from './offload.js';
import type { ReaderData } from './reader-worker.js';
import {
  bucketLabel,
  bucketOf,
  COUNTER,
  CTRL,
  defaultEntries,
  entryOf,
  type RingLayout,
  ringLayout,
  used,
} from './ring.js';

export interface UdpReceiverOptions {
  /** `[HOST:]PORT` or { host, port }; port 0 picks one (see `port`). */
  listen: string | HostPort;
  /** Sockets on the same port with SO_REUSEPORT, one reader each. The kernel spreads datagrams by flow hash, so more than one helps only with many flows. */
  sockets?: number;
  /** Messages per recvmmsg batch (default 64). */
  batch?: number;
  /** Bytes per message slot (default 2048, or 64 KiB with GRO). A larger datagram is counted as truncated, never delivered. */
  slot?: number | string;
  /** Keep filling a batch until it is full or this long has passed since its first datagram: milliseconds, or a string with its unit (default '1ms'; 0: hand over what one drain gives). */
  coalesce?: number | string;
  /** Receive buffer target as getsockopt reports it (default 8MiB). */
  rcvbuf?: number | string;
  /** 'wait' (default): a full ring makes the reader wait, the kernel's receive buffer absorbs the burst and what it then drops is counted as kernelDrops; 'drop': the reader keeps reading and drops in userspace (the newest datagrams). */
  onFull?: 'drop' | 'wait';
  /** UDP_GRO: true, false, or 'auto' (default: on where the kernel accepts it, unless `slot` below 64 KiB was asked for). */
  gro?: boolean | 'auto';
  /** Decode each datagram's source address into batch.addresses. */
  addresses?: boolean;
  /** Batches in the ring (default: at most 128 MiB of address space, 4 to 64: 64 without GRO, 32 with it). */
  ring?: number;
  /** Closes the receiver when aborted (as dgram.createSocket's `signal`). */
  signal?: AbortSignal;
}

/**
 * One batch of datagrams. Datagram i is data[offsets[i] … offsets[i] + lengths[i]). The views point
 * into the ring: they stay valid until the next batch is requested, and are reused after that.
 */
export interface UdpBatch {
  count: number;
  lengths: Uint32Array;
  offsets: Uint32Array;
  data: Buffer;
  /** When each datagram was taken from the kernel, µs since the epoch (one stamp per recvmmsg call). */
  timesUs: Float64Array;
  /** Source addresses, when the receiver was made with addresses: true. */
  addresses?: Endpoint[];
  /** Which socket (0 … sockets−1) it came from. */
  socket: number;
}

export interface UdpReceiverStats {
  /** Datagrams handed to the consumer. */
  received: number;
  bytes: number;
  batches: number;
  packetsPerBatch: { mean: number; histogram: Record<string, number> };
  /** Dropped by the kernel before the socket (SO_MEMINFO sk_drops, summed over sockets). */
  kernelDrops: number;
  /** Read from the kernel and dropped because the ring was full (onFull: 'drop'). */
  userspaceDrops: number;
  /** Larger than a slot: counted, never delivered. */
  truncated: number;
  /** Taken from the kernel, not yet handed over. */
  queued: number;
  /** Taken from the kernel and still queued when the application closed the receiver: never handed over, not dropped either. */
  unread: number;
  /** Whether the reader threads run (they start at the first batch asked for, or start()). */
  started: boolean;
  /** Udp RcvbufErrors of the whole host (IPv4) since the receiver started. */
  hostRcvbufErrors: number;
  /** SO_RCVBUF as getsockopt reports it (doubled). */
  rcvbuf: number;
  rcvbufReport: UdpRcvbufReport;
  /** recvmmsg calls that returned datagrams, and the messages they returned (with GRO a message holds many datagrams). */
  readerCalls: number;
  readerMessages: number;
  /** JavaScript steps per datagram: batches / received. */
  jsCallsPerDatagram: number;
  gro: boolean;
  /** Why gro: 'auto' left GRO off (slots below 64 KiB, the kernel refused, SOCKBUF_DISABLE_GRO=1); absent when it is on or was not asked for. */
  groOff?: string;
  sockets: number;
}

interface Ring {
  fd: number;
  worker: Worker;
  ctrl: Int32Array;
  counters: Float64Array;
  data: Buffer;
  lengths: Uint32Array;
  offsets: Uint32Array;
  times: Float64Array;
  counts: Int32Array;
  entryBytes: Float64Array;
  names?: Buffer;
  msgIndex?: Uint16Array;
  exited: Promise<void>;
}

const sizeOpt = (v: number | string | undefined, def: number, name: string) =>
  v === undefined ? def : parseSize(v, name);

function checkRange(name: string, v: number, min: number, max: number): number {
  if (!Number.isInteger(v) || v < min || v > max)
    throw new UsageError(`invalid value for ${name}: '${v}' (expected a whole number from ${min} to ${max})`);
  return v;
}

export class UdpReceiver implements AsyncIterable<UdpBatch> {
  readonly host: string;
  readonly port: number;
  readonly gro: boolean;
  readonly layout: RingLayout;
  private readonly fds: number[] = [];
  /** Kernel drops per socket, read once when its reader stopped (the fd is closed after). */
  private readonly finalDrops: (number | undefined)[] = [];
  private readonly rings: Ring[] = [];
  private readonly notify = new Int32Array(new SharedArrayBuffer(4));
  private held: { ring: number } | undefined;
  private next = 0;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private referenced = true;
  private running = false;
  private delivered = 0;
  private deliveredBytes = 0;
  private batches = 0;
  private unread = 0;
  private readonly histogram: number[] = [];
  private hostBase: number;
  /** What resetStats() took away: the counters at that moment. */
  private base = {
    delivered: 0,
    bytes: 0,
    batches: 0,
    kernelDrops: 0,
    udrops: 0,
    truncated: 0,
    calls: 0,
    messages: 0,
  };
  private rcvbufReport!: UdpRcvbufReport;
  private readonly addresses: boolean;
  private readonly untrack: () => void;
  private readonly onAbort: (() => void) | undefined;

  /** Use createUdpReceiver(). */
  constructor(
    private readonly o: Required<Omit<UdpReceiverOptions, 'listen' | 'ring' | 'signal'>> & {
      listen: HostPort;
      signal?: AbortSignal;
    },
    entries: number,
    gro: boolean,
    private readonly groOff?: string,
  ) {
    this.gro = gro;
    this.addresses = o.addresses;
    const slot = o.slot as number;
    this.layout = ringLayout(entries, o.batch, slot, gro ? MAX_SEGMENTS : 1);
    this.hostBase = observeUdpHost();
    let port = o.listen.port;
    const fds = this.fds;
    try {
      for (let i = 0; i < o.sockets; i++) {
        const fd = createSocket(o.listen.host, SOCK_DGRAM);
        fds.push(fd);
        if (o.sockets > 1) setIntOption(fd, SOL_SOCKET, SO_REUSEPORT, 1);
        if (gro) setIntOption(fd, IPPROTO_UDP, UDP_GRO, 1);
        const report = applyUdpRcvbuf(fd, o.rcvbuf as number);
        if (i === 0) this.rcvbufReport = report;
        bindFd(fd, { host: o.listen.host, port });
        if (port === 0) port = localEndpoint(fd)?.port ?? 0;
      }
    } catch (e) {
      for (const fd of fds) closeFd(fd);
      if (e instanceof SysError && ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(e.code))
        throw new EnvironmentError(
          `cannot listen on ${formatHostPort({ host: o.listen.host, port })}: ${e.code}`,
        );
      throw e;
    }
    this.host = o.listen.host;
    this.port = port;
    this.untrack = trackSource({
      kind: 'udp',
      name: formatHostPort({ host: this.host, port }),
      stats: () => this.stats(),
    });
    const signal = o.signal;
    if (signal) {
      this.onAbort = () => void this.close();
      if (signal.aborted) this.onAbort();
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private startReader(fd: number, coalesceSeconds: number): Ring {
    const L = this.layout;
    const e1 = L.entries + 1;
    const sab = (bytes: number) => new SharedArrayBuffer(bytes);
    const d: ReaderData = {
      fd,
      layout: L,
      gro: this.gro,
      coalesceNs: Math.round(coalesceSeconds * 1e9),
      onFull: this.o.onFull,
      controlBytes: this.gro ? CMSG_INT_SPACE : 0,
      data: sab(e1 * L.batchBytes),
      lengths: sab(e1 * L.maxDatagrams * 4),
      offsets: sab(e1 * L.maxDatagrams * 4),
      times: sab(e1 * L.maxDatagrams * 8),
      counts: sab(e1 * 4),
      entryBytes: sab(e1 * 8),
      names: this.addresses ? sab(e1 * L.batch * NAME_SIZE) : undefined,
      msgIndex: this.addresses ? sab(e1 * L.maxDatagrams * 2) : undefined,
      ctrl: sab(CTRL.SIZE * 4),
      notify: this.notify.buffer as SharedArrayBuffer,
      counters: sab(COUNTER.SIZE * 8),
    };
    const worker = spawnWorker(new URL('./reader-worker', import.meta.url), { workerData: d });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (m: { error?: string }) => {
      if (m.error) process.emitWarning(`sockbuf: UDP reader stopped: ${m.error}`);
    });
    worker.on('error', (err) => process.emitWarning(`sockbuf: UDP reader failed: ${err.message}`));
    return {
      fd,
      worker,
      exited,
      ctrl: new Int32Array(d.ctrl),
      counters: new Float64Array(d.counters),
      data: Buffer.from(d.data),
      lengths: new Uint32Array(d.lengths),
      offsets: new Uint32Array(d.offsets),
      times: new Float64Array(d.times),
      counts: new Int32Array(d.counts),
      entryBytes: new Float64Array(d.entryBytes),
      names: d.names ? Buffer.from(d.names) : undefined,
      msgIndex: d.msgIndex ? new Uint16Array(d.msgIndex) : undefined,
    };
  }

  /**
   * Starts the reader threads (one per socket) and resolves once they run. The first nextBatch() (or
   * step of `for await`) calls it; call it earlier to take datagrams from the kernel before the
   * application asks for them. Until then the kernel's receive buffer holds what arrives. Safe to call
   * twice; does nothing once stopped or closed.
   */
  start(): Promise<void> {
    this.starting ??= (async () => {
      if (this.stopping || this.closing) return;
      for (const fd of this.fds) this.rings.push(this.startReader(fd, this.o.coalesce as number));
      await Promise.all(
        this.rings.map(
          (r) =>
            new Promise<void>((resolve, reject) => {
              const onMsg = (m: { ready?: boolean; error?: string }) => {
                if (m.ready) resolve();
                else if (m.error) reject(new Error(`UDP reader failed: ${m.error}`));
              };
              r.worker.on('message', onMsg);
              r.worker.once('error', (e) => reject(new Error(`UDP reader failed: ${e.message}`)));
              r.worker.once('exit', () => reject(new Error('UDP reader thread exited')));
            }),
        ),
      );
      // unref only once running (a start() awaited in an unref'd receiver still completes), and after
      // the listeners (adding a 'message' listener refs the worker's port again)
      this.running = true;
      if (!this.referenced) this.unref();
    })();
    return this.starting;
  }

  /** Resolves once every reader thread is running (starts them). */
  ready(): Promise<void> {
    return this.start();
  }

  /** Lets the process exit while the receiver is open (as dgram's socket.unref()). */
  unref(): this {
    this.referenced = false;
    if (this.running) for (const r of this.rings) r.worker.unref();
    return this;
  }

  /** Keeps the process alive while the receiver reads (the default, as dgram's socket.ref()). */
  ref(): this {
    this.referenced = true;
    for (const r of this.rings) r.worker.ref();
    return this;
  }

  private release(): void {
    if (!this.held) return;
    const r = this.rings[this.held.ring];
    Atomics.add(r.ctrl, CTRL.TAIL, 1);
    Atomics.notify(r.ctrl, CTRL.TAIL);
    this.held = undefined;
  }

  private take(k: number): UdpBatch {
    const r = this.rings[k];
    const L = this.layout;
    const e = entryOf(Atomics.load(r.ctrl, CTRL.TAIL), L.entries);
    const count = r.counts[e];
    const base = e * L.maxDatagrams;
    const batch: UdpBatch = {
      count,
      lengths: r.lengths.subarray(base, base + count),
      offsets: r.offsets.subarray(base, base + count),
      data: r.data.subarray(e * L.batchBytes, (e + 1) * L.batchBytes),
      timesUs: r.times.subarray(base, base + count),
      socket: k,
    };
    if (r.names && r.msgIndex) {
      const names = r.names;
      const idx = r.msgIndex;
      const nb = e * L.batch * NAME_SIZE;
      batch.addresses = Array.from(
        { length: count },
        (_, i) => decodeSockaddr(names, nb + idx[base + i] * NAME_SIZE) as Endpoint,
      );
    }
    this.held = { ring: k };
    this.delivered += count;
    this.deliveredBytes += r.entryBytes[e];
    this.batches++;
    const b = bucketOf(count);
    this.histogram[b] = (this.histogram[b] ?? 0) + 1;
    return batch;
  }

  /**
   * The next batch, or undefined once stopped (and drained) or closed. Starts the readers on the first
   * call. Releases the batch handed out before.
   */
  async nextBatch(): Promise<UdpBatch | undefined> {
    this.release();
    if (!this.starting && !this.stopping && !this.closing) await this.start();
    for (;;) {
      if (this.closing) return undefined;
      const seen = Atomics.load(this.notify, 0);
      const n = this.rings.length;
      for (let i = 0; i < n; i++) {
        const k = (this.next + i) % n;
        const r = this.rings[k];
        if (used(Atomics.load(r.ctrl, CTRL.HEAD), Atomics.load(r.ctrl, CTRL.TAIL)) > 0) {
          this.next = (k + 1) % n;
          return this.take(k);
        }
      }
      // stopped (or never started), or every reader ended: nothing more will come
      if ((this.stopping || n > 0) && this.rings.every((r) => Atomics.load(r.ctrl, CTRL.DONE)))
        return undefined;
      // biome-ignore lint/suspicious/noExplicitAny: Atomics.waitAsync is not in the ES2023 lib
      const w = (Atomics as any).waitAsync(this.notify, 0, seen);
      if (w.async) await w.value;
    }
  }

  /** Leaving the loop early (break, return, throw) closes the receiver, as with a Node stream. */
  [Symbol.asyncIterator](): AsyncIterator<UdpBatch> {
    return {
      next: async () => {
        const b = await this.nextBatch();
        return b ? { value: b, done: false } : { value: undefined, done: true };
      },
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  private raw() {
    let truncated = 0;
    let udrops = 0;
    let kernelDrops = 0;
    let committed = 0;
    let calls = 0;
    let messages = 0;
    for (const r of this.rings) {
      truncated += r.counters[COUNTER.TRUNCATED];
      udrops += r.counters[COUNTER.USERSPACE_DROPS];
      committed += r.counters[COUNTER.RECEIVED];
      calls += r.counters[COUNTER.CALLS];
      messages += r.counters[COUNTER.MESSAGES];
    }
    this.fds.forEach((fd, i) => {
      kernelDrops += this.finalDrops[i] ?? udpKernelDrops(fd);
    });
    const { delivered, deliveredBytes: bytes, batches } = this;
    return { delivered, bytes, batches, kernelDrops, udrops, truncated, calls, messages, committed };
  }

  /**
   * Counts from zero again (as iperf3's --omit does after its warm-up): received, drops, batches and
   * calls from now on.
   */
  resetStats(): void {
    const r = this.raw();
    this.base = { ...r };
    this.histogram.fill(0);
    this.hostBase = observeUdpHost();
  }

  stats(): UdpReceiverStats {
    const r = this.raw();
    const b = this.base;
    const delivered = r.delivered - b.delivered;
    const batches = r.batches - b.batches;
    const histogram: Record<string, number> = {};
    this.histogram.forEach((n, i) => {
      if (n) histogram[bucketLabel(i)] = n;
    });
    return {
      received: delivered,
      bytes: r.bytes - b.bytes,
      batches,
      packetsPerBatch: { mean: batches ? delivered / batches : 0, histogram },
      kernelDrops: r.kernelDrops - b.kernelDrops,
      userspaceDrops: r.udrops - b.udrops,
      truncated: r.truncated - b.truncated,
      queued: Math.max(0, r.committed - r.delivered - this.unread),
      unread: this.unread,
      started: this.rings.length > 0,
      hostRcvbufErrors: observeUdpHost() - this.hostBase,
      rcvbuf: this.rcvbufReport.got,
      rcvbufReport: this.rcvbufReport,
      readerCalls: r.calls - b.calls,
      readerMessages: r.messages - b.messages,
      jsCallsPerDatagram: delivered ? batches / delivered : 0,
      gro: this.gro,
      ...(this.groOff === undefined ? {} : { groOff: this.groOff }),
      sockets: this.fds.length,
    };
  }

  /** `host:port` of the socket(s). */
  get address(): string {
    return formatHostPort({ host: this.host, port: this.port });
  }

  /**
   * Stops taking datagrams from the kernel (each reader returns within 50 ms); the batches already
   * taken are still handed out, then the iteration ends. close() afterwards frees everything.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      // a start() under way finishes first, so that its readers are stopped too
      await this.starting?.catch(() => {});
      for (const r of this.rings) {
        Atomics.store(r.ctrl, CTRL.STOP, 1);
        Atomics.notify(r.ctrl, CTRL.TAIL);
      }
      await Promise.all(this.rings.map((r) => r.exited));
      this.fds.forEach((fd, i) => {
        this.finalDrops[i] = udpKernelDrops(fd);
      });
      Atomics.add(this.notify, 0, 1);
      Atomics.notify(this.notify, 0);
    })();
    return this.stopping;
  }

  /**
   * Stops the readers (each returns within 50 ms even when no datagram comes), closes the sockets and
   * frees the ring. Datagrams taken from the kernel and not handed over yet are counted as `unread`.
   * Safe to call twice.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.untrack();
      if (this.onAbort) this.o.signal?.removeEventListener('abort', this.onAbort);
      this.release();
      Atomics.add(this.notify, 0, 1);
      Atomics.notify(this.notify, 0);
      await this.stop();
      let committed = 0;
      for (const r of this.rings) committed += r.counters[COUNTER.RECEIVED];
      for (const fd of this.fds) closeFd(fd);
      this.unread = committed - this.delivered;
    })();
    return this.closing;
  }
}
let warnedGroOff = false;

/**
 * Makes the sockets, applies the buffer policy and binds. The reader threads (one per socket) start at
 * the first batch asked for, or at start().
 */
export async function createUdpReceiver(options: UdpReceiverOptions): Promise<UdpReceiver> {
  const listen = typeof options.listen === 'string' ? parseListen(options.listen) : options.listen;
  const asked =
    options.slot === undefined ? undefined : checkRange('slot', sizeOpt(options.slot, 0, 'slot'), 1, 65536);
  // 'auto' turns GRO on where the kernel accepts it, unless slots too small for it were asked for.
  const groOpt = options.gro ?? 'auto';
  const smallSlots = asked !== undefined && asked < 65536;
  const gro = groAvailable(groOpt === 'auto' && smallSlots ? false : groOpt);
  const groOff =
    groOpt !== 'auto' || gro
      ? undefined
      : smallSlots
        ? `slot ${asked} B is below the 64 KiB a GRO message may need`
        : groRefusal();
  if (groOff !== undefined && !warnedGroOff) {
    warnedGroOff = true;
    process.emitWarning(`sockbuf: gro 'auto' left UDP_GRO off: ${groOff}`, { code: 'SOCKBUF_GRO_OFF' });
  }
  const slot = asked ?? (gro ? 65536 : 2048);
  if (gro && slot < 65536) throw new UsageError(`invalid value for slot: '${slot}' (GRO needs 64 KiB slots)`);
  const batch = checkRange('batch', options.batch ?? 64, 1, 1024);
  const sockets = checkRange('sockets', options.sockets ?? 1, 1, 64);
  const coalesce = options.coalesce === undefined ? 1e-3 : durationMs(options.coalesce, 'coalesce') / 1000;
  const rcvbuf = sizeOpt(options.rcvbuf, 8 * 1024 * 1024, 'rcvbuf');
  const onFull = options.onFull ?? 'wait';
  if (onFull !== 'drop' && onFull !== 'wait')
    throw new UsageError(`invalid value for onFull: '${onFull}' (expected drop or wait)`);
  const entries = checkRange('ring', options.ring ?? defaultEntries(batch, slot), 1, 4096);
  return new UdpReceiver(
    {
      listen,
      sockets,
      batch,
      slot,
      coalesce,
      rcvbuf,
      onFull,
      gro,
      addresses: options.addresses ?? false,
      signal: options.signal,
    },
    entries,
    gro,
    groOff,
  );
}
