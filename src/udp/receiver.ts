// The batched UDP receiver: one reader thread per socket does recvmmsg into a shared ring (see
// reader.worker.ts and ring.ts); JavaScript takes one batch per step of `for await`. The readers start
// when the application first asks for a batch (or calls start()): until then the kernel's receive
// buffer holds what comes. When the consumer falls behind and the ring is full, the reader waits and
// the kernel's buffer absorbs the burst (onFull 'wait', the default); with onFull 'drop' a full ring
// is drained into a scratch batch and counted as userspace drops. Kernel drops are read per socket
// from SO_MEMINFO. Life cycle as Node's own objects: close() is idempotent, leaving a `for await`
// closes, ref()/unref() as on a dgram socket, an AbortSignal closes.

import { EnvironmentError, SysError, UsageError } from '../errors.js';
import { trackSource } from '../observe/tracked.js';
import { formatHostPort } from '../policy/address.js';
import { applyUdpRcvbuf } from '../policy/apply.js';
import type { UdpRcvbufReport } from '../policy/buffers.js';
import { resolveFirst } from '../policy/resolve.js';
import { IPPROTO_UDP, SO_REUSEPORT, SOCK_DGRAM, SOL_SOCKET, UDP_GRO } from '../sys/constants.js';
import { bindFd, closeFd, createSocket, localEndpoint, setIntOption } from '../sys/socket.js';
import { shutdownRead } from '../sys/udp-socket.js';
import { MAX_SEGMENTS } from './gro.js';
import { observeUdpHost, udpKernelDrops } from './kernel-drops.js';
import {
  batchAt,
  type ReaderSettings,
  type Ring,
  readerReady,
  releaseEntry,
  startReader,
  type UdpBatch,
} from './reader-main.js';
import {
  type ResolvedReceiverOptions,
  resolveReceiverOptions,
  type UdpReceiverOptions,
} from './receiver-options.js';
import { histogramByLabel, readerCounters, type UdpReceiverStats } from './receiver-stats.js';
import { bucketOf, COUNTER, CTRL, type RingLayout, ringLayout, used } from './ring.js';

export type { UdpBatch } from './reader-main.js';
export type { UdpReceiverOptions } from './receiver-options.js';
export type { UdpReceiverStats } from './receiver-stats.js';

/** A batched UDP receiver: recvmmsg in a reader thread, one batch per call (what createUdpReceiver resolves with). */
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
    private readonly o: ResolvedReceiverOptions,
    entries: number,
    gro: boolean,
    private readonly groOff?: string,
  ) {
    if (typeof o?.listen?.host !== 'string' || !Number.isInteger(entries))
      throw new UsageError(
        'new UdpReceiver() takes resolved options: use createUdpReceiver(options)',
        'options',
      );
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
          { cause: e },
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

  /**
   * Starts the reader threads (one per socket) and resolves once they run. The first nextBatch() (or
   * step of `for await`) calls it; call it earlier to take datagrams from the kernel before the
   * application asks for them. Until then the kernel's receive buffer holds what arrives. Safe to call
   * twice; does nothing once stopped or closed.
   */
  start(): Promise<void> {
    this.starting ??= (async () => {
      if (this.stopping || this.closing) return;
      const settings: ReaderSettings = {
        layout: this.layout,
        gro: this.gro,
        coalesceSeconds: this.o.coalesce as number,
        onFull: this.o.onFull,
        addresses: this.addresses,
        notify: this.notify,
        where: this.address,
      };
      for (const fd of this.fds) this.rings.push(startReader(fd, settings));
      await Promise.all(this.rings.map(readerReady));
      // unref only once running (a start() awaited in an unref'd receiver still completes), and after
      // the listeners (adding a 'message' listener refs the worker's port again)
      this.running = true;
      if (!this.referenced) this.unref();
    })();
    return this.starting;
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
    releaseEntry(this.rings[this.held.ring]);
    this.held = undefined;
  }

  private take(k: number): UdpBatch {
    const { batch, bytes } = batchAt(this.rings[k], this.layout, k);
    const count = batch.count;
    this.held = { ring: k };
    this.delivered += count;
    this.deliveredBytes += bytes;
    this.batches++;
    const b = bucketOf(count);
    this.histogram[b] = (this.histogram[b] ?? 0) + 1;
    return batch;
  }

  /**
   * The next batch, or undefined once stopped (and drained) or closed. Starts the readers on the first
   * call. Releases the batch handed out before. Throws when a reader thread failed (what it had
   * taken is handed out first).
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
      // a reader thread that failed takes nothing more: waiting would be forever
      const failed = this.rings.find((r) => r.failure);
      if (failed?.failure) throw failed.failure;
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
    const { truncated, udrops, committed, calls, messages } = readerCounters(this.rings);
    let kernelDrops = 0;
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

  /** What was received and dropped (kernel, ring, truncated) and the calls made, since start or the last resetStats(). */
  stats(): UdpReceiverStats {
    const r = this.raw();
    const b = this.base;
    const delivered = r.delivered - b.delivered;
    const batches = r.batches - b.batches;
    const histogram = histogramByLabel(this.histogram);
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
        // a reader waiting in ppoll for the socket wakes now rather than at its next 50 ms timeout
        shutdownRead(r.fd);
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
  const r = resolveReceiverOptions(options);
  // a host name binds its first address (the options stay pure; the lookup is here)
  r.options.listen = {
    host: await resolveFirst(r.options.listen.host, {
      option: 'listen',
      value: formatHostPort(r.options.listen),
    }),
    port: r.options.listen.port,
  };
  // said once when gro: 'auto' was asked for; the default leaves the reason in stats().groOff only
  if (r.groOff !== undefined && options.gro === 'auto' && !warnedGroOff) {
    warnedGroOff = true;
    process.emitWarning(`gro 'auto' left UDP_GRO off: ${r.groOff}`, { code: 'SOCKBUF_GRO_OFF' });
  }
  return new UdpReceiver(r.options, r.entries, r.gro, r.groOff);
}
