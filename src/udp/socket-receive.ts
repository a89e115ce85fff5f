// The dgram socket's receive side. A socket reads on the main thread first, as node:dgram does (a
// node:dgram socket over a dup of its descriptor: libuv's wake-up and recvmsg, each datagram its own
// Buffer, errors as node's), so that it costs what node:dgram costs and delivers from the moment it
// is bound. When the main thread falls behind (the kernel's queue for the socket passes a quarter of
// its buffer, or the kernel dropped one) it hands the descriptor to the process's one reader thread
// (shared-reader.ts: epoll, recvmmsg in batches into a shared ring; started on first need), which keeps draining the socket
// while JavaScript works; when the rate falls again it takes the descriptor back. A socket with a queue
// bound goes to the thread at once and stays there. Either way every
// datagram reaches 'message' (msg, rinfo) (and, when listened for, 'messages' batches), in order.
// With a queue bound (maxQueueDelay), the socket is the reader thread's from bind, and a datagram that
// waited longer since it reached the kernel (its kernel stamp, SO_TIMESTAMPNS) is dropped and counted
// as stale instead of being handed over late.
import type dgram from 'node:dgram';
import type { EventEmitter } from 'node:events';
import { AF_INET, SO_TIMESTAMPNS, SOL_SOCKET } from '../sys/constants.js';
import { getMemInfo, receiveQueue } from '../sys/meminfo.js';
import { builtinOriginal } from '../sys/module-hook.js';
import { decodeSockaddr } from '../sys/sockaddr.js';
import { closeFd } from '../sys/socket.js';
import { setInt } from '../sys/udp-socket.js';
import { nowUs } from './clock.js';
import { errnoException } from './dgram-errors.js';
import { dupCloexec, type ReaderSink, type SharedBatch, sharedReader } from './shared-reader.js';

/** Where a datagram came from, as node:dgram's 'message' event gives it. */
export interface RemoteInfo {
  address: string;
  family: 'IPv4' | 'IPv6';
  port: number;
  size: number;
}

/** A 'messages' batch: datagrams read together (one, when the socket reads on the main thread). */
export interface DgramBatch {
  count: number;
  /** When they were read (wall-clock µs). */
  timeUs: number;
  /** Datagram i as a Buffer view (valid while the listener runs; copy it to keep it). */
  message(i: number): Buffer;
  /** Where datagram i came from. */
  rinfo(i: number): RemoteInfo;
}

export interface ReceiveOptions {
  /**
   * Milliseconds a datagram may wait since it reached the kernel before it is dropped as stale (0: no
   * bound; undefined: ANSWER_QUEUE_DELAY once the socket answers, see answers()).
   */
  maxQueueDelay: number | undefined;
  /** Nice levels above the process the reader thread asks for (0: the process's own). */
  readerNice: number;
  /**
   * Start the reader thread now, without the socket (a server's socket, bound to a port it named):
   * its start-up (~100 ms and ~120 ms of CPU) then lands before a flood, not in one.
   */
  prestart?: boolean;
}

export type ReceiveMode = 'main' | 'thread';

/** Check the kernel queue every this many datagrams read on the main thread … */
const CHECK_EVERY = 64;
/** … with a queue bound (one that answers, until it goes to the thread): its backlog is older each one. */
const CHECK_EVERY_BOUNDED = 8;
/** Take the reader thread when the kernel holds more than this share of the receive buffer. */
const BACKLOG_SHARE = 4;
/** The thread starts (without the socket) at this share of that backlog. */
const WARM_SHARE = 4;
/** With a queue bound, at a smaller backlog: what waits in the kernel waits too. */
const BOUNDED_BACKLOG_BYTES = 64 * 1024;
/**
 * The queue bound (ms) of a server's socket that answers its senders and was given none: its clients
 * wait for each answer, and under overload a late one is worth less than a fresh one. dns2 under
 * `dnsperf -q 1000 -t 1` (docs/dgram.md): without it the 8 MiB buffer held the whole backlog and
 * answers took 4 × stock node:dgram's; with it they come sooner than stock's, and more of them.
 */
export const ANSWER_QUEUE_DELAY = 20;
/** Give the socket back to the main thread below this rate (datagrams a second) … */
const LOW_RATE = 10_000;
/** … measured over this long. */
const RATE_WINDOW_MS = 2000;
const TRUNCATED = 0xffffffff;

function rinfoOf(names: Buffer, offset: number, size: number): RemoteInfo {
  const a = decodeSockaddr(names, offset);
  return { address: a?.host ?? '', family: a?.family === 6 ? 'IPv6' : 'IPv4', port: a?.port ?? 0, size };
}

/**
 * rinfoOf for a stream of datagrams, most of them from the sender before: an IPv4 sender's address
 * string is made once, not once a datagram (each rinfo is still its own object, as node's).
 */
class RinfoCache {
  private addr = -1;
  private host = '';

  at(names: Buffer, offset: number, size: number): RemoteInfo {
    if (names.readUInt16LE(offset) !== AF_INET) return rinfoOf(names, offset, size);
    const a = names.readUInt32LE(offset + 4);
    if (a !== this.addr) {
      this.host = decodeSockaddr(names, offset)?.host ?? '';
      this.addr = a;
    }
    return { address: this.host, family: 'IPv4', port: names.readUInt16BE(offset + 2), size };
  }
}

export class SocketReceiver implements ReaderSink {
  mode: ReceiveMode | 'starting' | 'releasing' | 'closed' = 'main';
  received = 0;
  receivedBytes = 0;
  batches = 0;
  stale = 0;
  /** Times the socket went to the reader thread. */
  handovers = 0;
  /** The kernel's drop count when the socket closed. */
  finalKernelDrops = 0;
  private inner: dgram.Socket | undefined;
  private id = -1;
  private lastDrops = 0;
  private windowStart = 0;
  private windowCount = 0;
  private readerDrops = 0;
  private readerTruncated = 0;
  /** Whether the socket keeps the process alive (ref()/unref()). */
  private referenced = true;
  private readonly rinfos = new RinfoCache();
  /** What keeps it alive while no node:dgram socket reads for it (on the reader thread, or starting). */
  private keepAlive: NodeJS.Timeout | undefined;
  /** The queue bound in force (ms; 0: none): the option's, or ANSWER_QUEUE_DELAY once it answers. */
  private bound: number;
  /** Whether the bound came with the socket (maxQueueDelay > 0): then it is the thread's from bind, for good. */
  private readonly fixedBound: boolean;

  constructor(
    private readonly fd: number,
    private readonly type: 'udp4' | 'udp6',
    private readonly target: EventEmitter,
    private readonly o: ReceiveOptions,
  ) {
    sharedReader().hold();
    this.bound = o.maxQueueDelay ?? 0;
    this.fixedBound = this.bound > 0;
    if (this.fixedBound) {
      // a bounded queue is the reader thread's to keep: the kernel stamps each datagram as it arrives
      // and the thread hands that stamp over, while the main thread's reads (node:dgram's) carry none.
      // Until the thread runs (the process's first such socket) the datagrams wait in the kernel,
      // stamped, and are judged by their age when it takes them.
      setInt(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
      this.toThread();
      this.syncRef();
    } else {
      this.readOnMain();
      // started when a flood came, the thread's start-up took CPU from a main thread already behind:
      // Etsy StatsD at 100-130 k/s lost 2 000-15 000 datagrams in those ~100 ms, and none after the
      // hand-over (docs/dgram.md)
      if (o.prestart)
        sharedReader()
          .start()
          .catch(() => {}); // toThread() says why, if it ever needs the thread
    }
  }

  /** Reads on the main thread: a node:dgram socket over a dup of the descriptor. */
  private readOnMain(): void {
    this.mode = 'main';
    const dup = dupCloexec(this.fd);
    if (dup < 0) throw errnoException(dup, 'dup');
    const inner = builtinOriginal<typeof dgram>('dgram').createSocket(this.type);
    inner.on('message', (msg, rinfo) => this.onMain(msg, rinfo));
    inner.on('error', (e) => this.target.emit('error', e));
    inner.bind({ fd: dup, exclusive: true }); // exclusive: in a cluster worker too, this descriptor
    this.inner = inner;
    this.syncRef();
  }

  /**
   * The socket sends (socket.ts calls this for a server's socket, bound to a port it named): a
   * request/response server, whose clients wait for each answer. Given no bound of its own
   * (maxQueueDelay unset), it gets ANSWER_QUEUE_DELAY from now on: the kernel stamps what arrives,
   * the main thread hands it to the reader thread at the bounded backlog (64 KiB, not a quarter of
   * 8 MiB), and there what waited longer is dropped and counted as stale. A one-way server (StatsD,
   * syslog) never sends, and keeps every datagram the buffer holds.
   */
  answers(): void {
    if (this.bound > 0 || this.o.maxQueueDelay !== undefined || this.mode === 'closed') return;
    this.bound = ANSWER_QUEUE_DELAY;
    setInt(this.fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
    if (this.id >= 0) sharedReader().bound(this.id);
    else this.checkBacklog(); // a backlog already there (a server flooded from its start) goes to the thread now
  }

  /** ref()/unref() of the socket. */
  setRef(on: boolean): void {
    this.referenced = on;
    this.syncRef();
  }

  /**
   * While the main thread reads, its node:dgram socket keeps the process alive as node's would
   * (ref'd or not); otherwise (on the reader thread, which never does) a timer that never fires.
   */
  private syncRef(): void {
    const inner = this.inner;
    if (inner) this.referenced ? inner.ref() : inner.unref();
    const need = this.referenced && !inner && this.mode !== 'closed';
    if (need && !this.keepAlive) this.keepAlive = setInterval(() => {}, 2 ** 31 - 1);
    else if (!need && this.keepAlive) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }

  private onMain(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    this.received++;
    this.receivedBytes += msg.length;
    this.batches++;
    if (this.received % (this.bound > 0 ? CHECK_EVERY_BOUNDED : CHECK_EVERY) === 0) this.checkBacklog();
    const t = this.target;
    if (t.listenerCount('messages') > 0)
      t.emit('messages', {
        count: 1,
        timeUs: nowUs(),
        message: () => msg,
        rinfo: () => rinfo as RemoteInfo,
      } satisfies DgramBatch);
    t.emit('message', msg, rinfo);
  }

  /** Whether the main thread falls behind: then the reader thread takes over. */
  private checkBacklog(): void {
    if (this.mode !== 'main') return;
    const m = receiveQueue(this.fd);
    if (!m) return;
    const limit = this.bound > 0 ? BOUNDED_BACKLOG_BYTES : m.rcvbuf / BACKLOG_SHARE;
    const drops = m.drops;
    if (m.rmemAlloc > limit || drops > this.lastDrops) this.toThread();
    // a quarter of the way there, the thread starts (and waits): its start-up (tens of ms of CPU)
    // then lands before the main thread is behind, not on a main thread that already is
    else if (m.rmemAlloc > limit / WARM_SHARE && !sharedReader().isRunning)
      sharedReader()
        .start()
        .catch(() => {}); // toThread() says why, if it ever needs the thread
    this.lastDrops = drops;
  }

  private toThread(): void {
    const r = sharedReader();
    r.raisePriority(this.o.readerNice);
    this.mode = 'starting';
    r.start().then(
      () => {
        if (this.mode !== 'starting') return;
        try {
          this.id = r.watch(this.fd, this, this.bound > 0);
        } catch (e) {
          this.backToMain();
          return this.warn(e as Error);
        }
        // libuv reads only when this thread returns to the loop, and node's close() stops it at once:
        // nothing read after this is the main thread's
        this.inner?.close();
        this.inner = undefined;
        this.mode = 'thread';
        this.syncRef();
        this.handovers++;
        this.windowStart = performance.now();
        this.windowCount = 0;
      },
      (e: Error) => {
        if (this.mode === 'starting') this.backToMain();
        this.warn(e);
      },
    );
  }

  /** The thread could not take the socket: the main thread reads (again, or from now on). */
  private backToMain(): void {
    if (this.inner) this.mode = 'main';
    else this.readOnMain();
  }

  private warn(e: Error): void {
    if (this.target.listenerCount('error') > 0) this.target.emit('error', e);
    else
      process.emitWarning(
        `sockbuf/dgram: ${e.message}; the socket reads on the main thread`,
        'SOCKBUF_READER',
      );
  }

  onBatch(b: SharedBatch): void {
    if (this.mode === 'closed') return;
    const n = b.count;
    this.batches++;
    const t = this.target;
    const bound = this.bound * 1000;
    // with a bound, each datagram's age is judged as it is handed over (older ones come first: when
    // the batch's last is stale, so are all); one read before the bound (no stamp: 0) is not judged
    if (bound > 0 && b.arrivalUs(0) > 0 && nowUs() - b.arrivalUs(n - 1) > bound) {
      this.stale += n;
      return;
    }
    if (t.listenerCount('messages') > 0) {
      const batch: DgramBatch = {
        count: n,
        timeUs: b.timeUs,
        message: (i) => b.data.subarray(b.dataOffset(i), b.dataOffset(i) + b.lengths[i]),
        rinfo: (i) => rinfoOf(b.names, b.nameOffset(i), b.lengths[i]),
      };
      t.emit('messages', batch);
    }
    for (let i = 0; i < n && (this.mode as string) !== 'closed'; i++) {
      const len = b.lengths[i];
      if (len === TRUNCATED) continue;
      if (bound > 0 && b.arrivalUs(i) > 0 && nowUs() - b.arrivalUs(i) > bound) {
        this.stale++;
        continue;
      }
      // each its own ArrayBuffer, as node:dgram's
      const msg = Buffer.allocUnsafeSlow(len);
      const off = b.dataOffset(i);
      b.data.copy(msg, 0, off, off + len);
      this.received++;
      this.receivedBytes += len;
      t.emit('message', msg, this.rinfos.at(b.names, b.nameOffset(i), len));
    }
    this.windowCount += n;
    const now = performance.now();
    if (now - this.windowStart >= RATE_WINDOW_MS) {
      const rate = (this.windowCount * 1000) / (now - this.windowStart);
      this.windowStart = now;
      this.windowCount = 0;
      if (rate < LOW_RATE && this.mode === 'thread' && this.bound === 0) {
        this.mode = 'releasing';
        sharedReader().release(this.id, this.fd);
      }
    }
  }

  onReceiveError(negErrno: number): void {
    if (this.mode !== 'closed') this.target.emit('error', errnoException(negErrno, 'recvmsg'));
  }

  onReleased(): void {
    this.keepCounts();
    this.id = -1;
    if (this.mode === 'releasing') this.readOnMain();
  }

  onReaderFailed(e: Error): void {
    this.id = -1;
    if (this.mode === 'closed') return;
    this.readOnMain();
    this.warn(e);
  }

  private keepCounts(): void {
    if (this.id < 0) return;
    const c = sharedReader().counts_(this.id);
    this.readerDrops += c.drops;
    this.readerTruncated += c.truncated;
  }

  private kernelDrops(): number {
    return getMemInfo(this.fd).drops ?? 0;
  }

  /** Datagrams the reader thread dropped (ring full, queue bound set) and truncated. */
  readerCounts(): { drops: number; truncated: number } {
    const c = this.id >= 0 ? sharedReader().counts_(this.id) : { drops: 0, truncated: 0 };
    return { drops: this.readerDrops + c.drops, truncated: this.readerTruncated + c.truncated };
  }

  /** Stops reading and closes the descriptor (in the reader thread when it has it). */
  close(): void {
    const was = this.mode;
    this.mode = 'closed';
    // read only for a socket that dropped or was handed over: a socket per request pays no extra call
    if (this.lastDrops || this.handovers) this.finalKernelDrops = this.kernelDrops();
    this.inner?.close();
    this.inner = undefined;
    this.syncRef();
    if ((was === 'thread' || was === 'releasing') && this.id >= 0) {
      this.keepCounts();
      sharedReader().close(this.id, this.fd);
      this.id = -1;
    } else closeFd(this.fd);
    sharedReader().unhold();
  }
}
