// The application's UDP sender: the caller's datagrams go out in batches, up to `batch` messages per
// sendmmsg, and a run of datagrams of one size to one destination goes as one UDP_SEGMENT (GSO)
// message that the kernel cuts into datagrams (the last one of a run may be shorter, as the kernel
// allows). Where the kernel refuses GSO (EIO: a device without checksum offload; EINVAL/EMSGSIZE: a
// segment larger than the path's MTU) the refused run goes again as plain datagrams and the refusal is
// remembered (all GSO after EIO; that segment size and larger after EINVAL/EMSGSIZE).
// sendBatch copies the payloads into the sender's own memory before the call (so the caller may reuse
// its buffers as soon as trySendBatch returns; for sendBatch, once its promise settles). sendSegments
// sends one buffer of equal-size datagrams laid end to end straight from the caller's memory, the
// way UDP_SEGMENT itself takes them: no copy, nothing per datagram but the kernel's work (the
// benchmark tool's blast sends this way, stamping its header into the buffer first).
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { resolveFirst } from '../policy/resolve.js';
import {
  EAGAIN,
  EINTR,
  EINVAL,
  EIO,
  EMSGSIZE,
  ERRNO_NAMES,
  SO_SNDBUF,
  SOCK_DGRAM,
  SOL_SOCKET,
} from '../sys/constants.js';
import { call } from '../sys/libc.js';
import { addressOfView, SendVec, writable } from '../sys/mmsg.js';
import { encodeSockaddr } from '../sys/sockaddr.js';
import { closeFd, createSocket, getIntOption, setIntOption } from '../sys/socket.js';
import { MAX_SEGMENTS } from './gro.js';
import { GsoLimit, type GsoRefusal, gsoAvailable } from './offload.js';
import { type Dest, Destinations } from './send-targets.js';
import {
  badDatagram,
  checkBatch,
  checkDatagrams,
  checkShape,
  checkSndbuf,
  checkTo,
  MAX_DATAGRAM,
  UdpSendError,
  type UdpSenderOptions,
  type UdpSenderStats,
  type UdpTarget,
} from './sender-options.js';

export type { GsoRefusal } from './offload.js';
export type { UdpSenderOptions, UdpSenderStats, UdpTarget } from './sender-options.js';
export { MAX_DATAGRAM, UdpSendError } from './sender-options.js';

const BLOCKED = 1;
const REFUSED = 2;
const EMPTY: readonly Uint8Array[] = [];

/** Staging memory for one sendmmsg: starts small, grows (doubling) to this when calls fill it. */
const MIN_STAGING = 128 * 1024;
const MAX_STAGING = 1024 * 1024;

let openingOf: (s: UdpSender) => Promise<void> | undefined;

/** A UDP sender of the caller's own datagrams: sendmmsg, GSO for runs of one size (what createUdpSender resolves with). */
export class UdpSender {
  /** The default destination (connected), if one was given. */
  readonly to: HostPort | undefined;
  readonly batch: number;
  private fdValue = -1;
  private readonly ownsFd: boolean;
  private vec: SendVec | undefined;
  /** Per message of the current call: its first datagram, how many it carries, its bytes. */
  private readonly starts: Int32Array;
  private readonly counts: Int32Array;
  private readonly lens: Int32Array;
  private readonly segs: Int32Array;
  private readonly gso: GsoLimit;
  private readonly dests = new Destinations();
  /** Why the last flush stopped short: BLOCKED (EAGAIN) or REFUSED (GSO); 0 when all went. */
  private stop = 0;
  private closed = false;
  private opening: Promise<void> | undefined;
  private readonly counters: UdpSenderStats = {
    datagrams: 0,
    bytes: 0,
    calls: 0,
    gsoMessages: 0,
    blocked: 0,
    errorsByCode: {},
  };
  /** Called once when the kernel refuses GSO (the refused datagrams went without it). */
  onWarning: (message: string) => void = (m) => process.emitWarning(m, { code: 'SOCKBUF_GSO' });

  /** A sender whose socket is made at once (for `to` given as an address); createUdpSender also waits for a host name to resolve. */
  constructor(o: UdpSenderOptions = {}) {
    checkShape(o);
    this.to = checkTo(o.to);
    this.batch = checkBatch(o.batch);
    const sndbuf = checkSndbuf(o.sndbuf);
    this.gso = new GsoLimit(gsoAvailable(o.gso ?? 'auto'));
    this.starts = new Int32Array(this.batch);
    this.counts = new Int32Array(this.batch);
    this.lens = new Int32Array(this.batch);
    this.segs = new Int32Array(this.batch);
    this.ownsFd = o.fd === undefined;
    if (o.fd !== undefined) {
      if (!Number.isInteger(o.fd) || o.fd < 0) throw UsageError.invalid('fd', o.fd, 'an open UDP socket');
      this.fdValue = o.fd;
      if (this.to) this.connect(this.to.host);
    } else if (!this.to) this.open(o.type === 'udp6' ? '::' : '0.0.0.0', sndbuf);
    else if (isIP(this.to.host)) this.open(this.to.host, sndbuf);
    else {
      const name = this.to.host;
      this.opening = resolveFirst(name, { option: 'to', value: formatHostPort(this.to) }).then((host) => {
        this.opening = undefined;
        if (!this.closed) this.open(host, sndbuf);
      });
      this.opening.catch(() => {}); // reported where it is awaited
    }
  }

  private open(host: string, sndbuf: number | undefined): void {
    const fd = createSocket(host, SOCK_DGRAM);
    try {
      if (sndbuf !== undefined) setIntOption(fd, SOL_SOCKET, SO_SNDBUF, sndbuf);
      this.fdValue = fd;
      if (this.to) this.connect(host);
    } catch (e) {
      closeFd(fd);
      this.fdValue = -1;
      throw e;
    }
  }

  private connect(host: string): void {
    const sa = encodeSockaddr({ host, port: this.to?.port ?? 0 });
    call('connect', this.fdValue, sa, sa.length);
  }

  static {
    // createUdpSender's view of the resolution in progress, kept off the public surface
    openingOf = (s) => s.opening;
  }

  /** The socket's descriptor (−1 until ready for a host name). */
  get fd(): number {
    return this.fdValue;
  }

  /** SO_SNDBUF as getsockopt reports it. */
  get sndbuf(): number {
    return getIntOption(this.fdValue, SOL_SOCKET, SO_SNDBUF);
  }

  /** Whether runs of equal-size datagrams go as GSO messages (false once the kernel refused it all). */
  get usingGso(): boolean {
    return this.gso.max > 0;
  }

  /** GSO's last refusal, if any: the errno name and the segment size (it and larger go without GSO). */
  get gsoRefusal(): GsoRefusal | undefined {
    return this.gso.refusal;
  }

  /** Datagrams and bytes the kernel accepted, calls, GSO messages, full buffers and refusals by errno name, since the sender was made. */
  stats(): UdpSenderStats {
    return { ...this.counters, errorsByCode: { ...this.counters.errorsByCode } };
  }

  /** The default destination as `host:port`, if one was given. */
  get address(): string | undefined {
    return this.to && formatHostPort(this.to);
  }

  private usable(): void {
    if (this.closed) throw new UsageError('sendBatch: the sender is closed', 'sendBatch');
    if (this.fdValue < 0)
      throw new UsageError(
        'sendBatch before the sender opened: the host name is still resolving',
        'sendBatch',
      );
  }

  /**
   * Sends datagrams [from, end) in order, without waiting: returns how many the kernel took (fewer
   * when the socket buffer filled: call again from there once writable, or use sendBatch). `to` is
   * one destination for all, one per datagram (an array as long as `datagrams`), or none (the
   * connected peer). Throws UdpSendError for datagrams the kernel refused, UsageError for bad input.
   */
  trySendBatch(
    datagrams: readonly Uint8Array[],
    to?: UdpTarget | readonly UdpTarget[],
    from = 0,
    end = datagrams.length,
  ): number {
    this.usable();
    checkDatagrams(datagrams, to, from, end);
    const each = Array.isArray(to) ? (to as readonly UdpTarget[]) : undefined;
    const one = each || to === undefined ? undefined : this.dests.get(to as UdpTarget, 'to');
    let i = from;
    let sent = 0;
    while (i < end) {
      const vec = this.staging(datagrams, i, end);
      const data = vec.data;
      const cap = data.length;
      const gsoMax = this.gso.max;
      let m = 0;
      let off = 0;
      let prev: Dest | undefined;
      let slot = -1;
      // fill: one message per datagram, or per run of equal-size datagrams to one destination (GSO)
      while (m < this.batch && i < end) {
        const d = datagrams[i];
        const len = d.length;
        if (off + len > cap) break;
        const dest = each ? this.dests.get(each[i], `to[${i}]`) : one;
        if (dest !== prev) {
          prev = dest;
          slot = dest ? m : -1;
          if (dest) vec.setName(m, dest.sa);
        }
        data.set(d, off);
        let n = 1;
        let total = len;
        if (len > 0 && len <= gsoMax) {
          while (n < MAX_SEGMENTS && i + n < end) {
            const e = datagrams[i + n];
            const el = e.length;
            if (el > len || el === 0 || total + el > MAX_DATAGRAM || off + total + el > cap) break;
            if (each && this.dests.get(each[i + n], `to[${i + n}]`) !== dest) break;
            data.set(e, off + total);
            total += el;
            n++;
            if (el < len) break; // a shorter datagram ends the run
          }
        }
        vec.setMessage(m, off, total, slot, n > 1 ? len : 0);
        this.note(m, i, n, total, len);
        m++;
        i += n;
        off += total;
      }
      const k = this.flush(vec, m, sent);
      for (let j = 0; j < k; j++) sent += this.counts[j];
      if (k < m) {
        if (this.stop === BLOCKED) return sent;
        i = this.starts[k]; // GSO refused: fill again from that run, which now goes plain
      }
    }
    return sent;
  }

  /**
   * Sends `data` as datagrams of `segment` bytes laid end to end (the last may be shorter), datagrams
   * [from, end), without waiting and without copying: up to 64 datagrams per GSO message straight
   * from `data`. Returns how many datagrams the kernel took; otherwise as trySendBatch.
   */
  trySendSegments(data: Uint8Array, segment: number, to?: UdpTarget, from = 0, end?: number): number {
    if (!(data instanceof Uint8Array)) throw badDatagram(data, 0, 'data');
    if (!Number.isInteger(segment) || segment < 1 || segment > MAX_DATAGRAM)
      throw UsageError.invalid('segment', segment, `a whole number from 1 to ${MAX_DATAGRAM}`);
    const all = Math.ceil(data.length / segment);
    const count = end ?? all;
    this.usable();
    if (!Number.isInteger(from) || !Number.isInteger(count) || from < 0 || count > all || from > count)
      throw UsageError.invalid('from/end', `${from}/${count}`, `0 ≤ from ≤ end ≤ ${all}`);
    const slot = to === undefined ? -1 : 0;
    const dest = to === undefined ? undefined : this.dests.get(to, 'to');
    const base = count > from ? addressOfView(data) : 0;
    let i = from;
    let sent = 0;
    while (i < count) {
      const vec = this.staging(EMPTY, 0, 0);
      if (dest) vec.setName(0, dest.sa);
      const per = segment <= this.gso.max ? Math.min(MAX_SEGMENTS, Math.floor(MAX_DATAGRAM / segment)) : 1;
      let m = 0;
      for (; m < this.batch && i < count; m++) {
        const n = Math.min(per, count - i);
        const at = i * segment;
        const total = Math.min(n * segment, data.length - at);
        vec.setMessageAt(m, base + at, total, slot, n > 1 ? segment : 0);
        this.note(m, i, n, total, segment);
        i += n;
      }
      const k = this.flush(vec, m, sent);
      for (let j = 0; j < k; j++) sent += this.counts[j];
      if (k < m) {
        if (this.stop === BLOCKED) return sent;
        i = this.starts[k];
      }
    }
    return sent;
  }

  private note(m: number, first: number, n: number, bytes: number, segment: number): void {
    this.starts[m] = first;
    this.counts[m] = n;
    this.lens[m] = bytes;
    this.segs[m] = segment;
  }

  /**
   * sendmmsg of messages [0, m) until all went, the socket buffer is full (stop = BLOCKED) or GSO
   * was refused (stop = REFUSED, remembered); returns how many messages went. A refused message
   * throws UdpSendError (`before`: datagrams of the call that went before this flush).
   */
  private flush(vec: SendVec, m: number, before: number): number {
    this.stop = 0;
    let k = 0;
    while (k < m) {
      const r = vec.send(this.fdValue, k, m - k);
      this.counters.calls++;
      if (r > 0) {
        for (let j = k; j < k + r; j++) {
          this.counters.datagrams += this.counts[j];
          this.counters.bytes += this.lens[j];
          if (this.counts[j] > 1) this.counters.gsoMessages++;
        }
        k += r;
        continue;
      }
      const errno = -r;
      if (errno === EINTR) continue;
      if (errno === EAGAIN) {
        this.counters.blocked++;
        this.stop = BLOCKED;
        return k;
      }
      if (this.counts[k] > 1 && (errno === EIO || errno === EINVAL || errno === EMSGSIZE)) {
        const warning = this.gso.refuse(errno, this.segs[k]);
        if (warning) this.onWarning(warning);
        this.stop = REFUSED;
        return k;
      }
      const code = ERRNO_NAMES[errno] ?? `E${errno}`;
      this.counters.errorsByCode[code] = (this.counters.errorsByCode[code] ?? 0) + 1;
      let sent = before;
      for (let j = 0; j < k; j++) sent += this.counts[j];
      throw new UdpSendError(errno, this.starts[k], this.counts[k], sent);
    }
    return k;
  }

  /** The staging memory, grown (doubling, to MAX_STAGING) when the datagrams left need more. */
  private staging(datagrams: readonly Uint8Array[], from: number, end: number): SendVec {
    const have = this.vec ? this.vec.data.length - MAX_DATAGRAM : 0;
    if (this.vec && have >= MAX_STAGING) return this.vec;
    let want = 0;
    for (let i = from; i < end && want <= have; i++) want += datagrams[i].length;
    if (!this.vec || want > have) {
      let size = Math.max(MIN_STAGING, have);
      while (size < want && size < MAX_STAGING) size *= 2;
      // room past `size` for one largest datagram, so that any datagram fits an empty staging
      this.vec = new SendVec(this.batch, size + MAX_DATAGRAM);
    }
    return this.vec;
  }

  /**
   * Sends every datagram, waiting while the socket buffer is full; resolves with how many went (all
   * of them). Rejects with UdpSendError at the first refused message (its `index` and `count` say
   * which datagrams, `sent` how many went before: the caller may go on from index + count).
   */
  sendBatch(datagrams: readonly Uint8Array[], to?: UdpTarget | readonly UdpTarget[]): Promise<number> {
    return this.whole(datagrams?.length ?? 0, (at) => this.trySendBatch(datagrams, to, at));
  }

  /** trySendSegments until every datagram of `data` went, waiting while the socket buffer is full. */
  sendSegments(data: Uint8Array, segment: number, to?: UdpTarget): Promise<number> {
    const count = data instanceof Uint8Array && segment > 0 ? Math.ceil(data.length / segment) : 0;
    return this.whole(count, (at) => this.trySendSegments(data, segment, to, at));
  }

  private async whole(count: number, from: (at: number) => number): Promise<number> {
    if (this.opening) await this.opening;
    let at = 0;
    for (;;) {
      try {
        at += from(at);
      } catch (e) {
        if (e instanceof UdpSendError) e.sent += at;
        throw e;
      }
      if (at >= count) return count;
      await writable(this.fdValue, 50);
    }
  }

  /** Closes the socket (unless it was given as `fd`). Later sends throw. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsFd && this.fdValue >= 0) closeFd(this.fdValue);
  }
}

/** Makes a sender (socket, buffer policy, `to` resolved and connected): like createUdpReceiver, async. */
export async function createUdpSender(options: UdpSenderOptions = {}): Promise<UdpSender> {
  const sender = new UdpSender(options);
  await openingOf(sender);
  return sender;
}
