// The application's UDP sender: the caller's datagrams go out in batches, up to `batch` messages per
// sendmmsg, and a run of datagrams of one size to one destination goes as one UDP_SEGMENT (GSO)
// message that the kernel cuts into datagrams (the last one of a run may be shorter, as the kernel
// allows). Where the kernel refuses GSO (EIO: a device without checksum offload; EINVAL/EMSGSIZE: a
// segment larger than the path's MTU) the refused run goes again as plain datagrams and the refusal is
// remembered (all GSO after EIO; that segment size and larger after EINVAL/EMSGSIZE).
// Payloads are copied into the sender's own memory before the call, so the caller may reuse its
// buffers as soon as trySendBatch returns (for sendBatch: once its promise settles).
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort, parseTo } from '../policy/address.js';
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
import { SendVec, writable } from '../sys/mmsg.js';
import { encodeSockaddr } from '../sys/sockaddr.js';
import { closeFd, createSocket, getIntOption, setIntOption } from '../sys/socket.js';
import { MAX_SEGMENTS } from './gro.js';
import { gsoAvailable } from './offload.js';
import {
  badDatagram,
  checkBatch,
  checkSndbuf,
  MAX_DATAGRAM,
  parseTarget,
  UdpSendError,
  type UdpSenderOptions,
  type UdpSenderStats,
  type UdpTarget,
} from './sender-options.js';

export type { UdpSenderOptions, UdpSenderStats, UdpTarget } from './sender-options.js';
export { MAX_DATAGRAM, UdpSendError } from './sender-options.js';

export interface GsoRefusal {
  code: string;
  segment?: number;
}

/** A destination, its sockaddr encoded once. */
interface Dest {
  host: string;
  port: number;
  sa: Buffer;
}

/** Staging memory for one sendmmsg: starts small, grows (doubling) to this when calls fill it. */
const MIN_STAGING = 128 * 1024;
const MAX_STAGING = 1024 * 1024;

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
  /** GSO only for segments up to this size (0: off). */
  private gsoMax: number;
  private refusal: GsoRefusal | undefined;
  private readonly dests = new Map<string, Dest>();
  private lastTarget: UdpTarget | undefined;
  private lastDest: Dest | undefined;
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

  constructor(o: UdpSenderOptions = {}) {
    this.to = o.to === undefined ? undefined : typeof o.to === 'string' ? parseTo(o.to) : o.to;
    this.batch = checkBatch(o.batch);
    const sndbuf = checkSndbuf(o.sndbuf);
    if (o.type !== undefined && o.type !== 'udp4' && o.type !== 'udp6')
      throw UsageError.invalid('type', String(o.type), 'udp4 or udp6');
    this.gsoMax = gsoAvailable(o.gso ?? 'auto') ? MAX_DATAGRAM : 0;
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
      this.opening = resolveFirst(name).then((host) => {
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

  /** Resolves when the socket is made (at once, unless `to` was a host name). */
  async ready(): Promise<void> {
    await this.opening;
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
    return this.gsoMax > 0;
  }

  /**
   * The last refusal of GSO, if any: the errno name, and the segment size refused (that size and
   * larger no longer go with GSO; without a segment, EIO, none does).
   */
  get gsoRefusal(): GsoRefusal | undefined {
    return this.refusal;
  }

  stats(): UdpSenderStats {
    return { ...this.counters, errorsByCode: { ...this.counters.errorsByCode } };
  }

  get address(): string | undefined {
    return this.to && formatHostPort(this.to);
  }

  private dest(t: UdpTarget, option: string): Dest {
    if (t === this.lastTarget && this.lastDest) return this.lastDest;
    let d: Dest | undefined;
    if (typeof t === 'string') d = this.dests.get(t);
    else if (t !== null && typeof t === 'object') {
      const host = 'address' in t ? t.address : t.host;
      const last = this.lastDest;
      if (last && last.host === host && last.port === t.port) d = last;
      else d = this.dests.get(`${host}|${t.port}`);
    }
    if (!d) {
      const hp = parseTarget(t, option);
      const key = `${hp.host}|${hp.port}`;
      d = this.dests.get(key) ?? { host: hp.host, port: hp.port, sa: encodeSockaddr(hp) };
      if (this.dests.size > 4096) this.dests.clear();
      this.dests.set(key, d);
      if (typeof t === 'string') this.dests.set(t, d);
    }
    this.lastTarget = t;
    this.lastDest = d;
    return d;
  }

  private check(
    datagrams: readonly Uint8Array[],
    to: UdpTarget | readonly UdpTarget[] | undefined,
    from: number,
    end: number,
  ) {
    if (this.closed) throw new UsageError('sendBatch: the sender is closed', 'sendBatch');
    if (this.fdValue < 0)
      throw new UsageError('sendBatch before ready(): the host name is still resolving', 'sendBatch');
    if (!Array.isArray(datagrams))
      throw UsageError.invalid('datagrams', typeof datagrams, 'an array of Buffers');
    if (!Number.isInteger(from) || !Number.isInteger(end) || from < 0 || end > datagrams.length || from > end)
      throw UsageError.invalid('from/end', `${from}/${end}`, `0 ≤ from ≤ end ≤ ${datagrams.length}`);
    for (let i = from; i < end; i++) {
      const d = datagrams[i];
      if (!(d instanceof Uint8Array) || d.length > MAX_DATAGRAM) throw badDatagram(d, i);
    }
    if (Array.isArray(to) && to.length < end)
      throw UsageError.invalid('to', `${to.length} destinations`, `one per datagram: ${end}`);
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
    this.check(datagrams, to, from, end);
    const each = Array.isArray(to) ? (to as readonly UdpTarget[]) : undefined;
    const one = each || to === undefined ? undefined : this.dest(to as UdpTarget, 'to');
    let i = from;
    let sent = 0;
    while (i < end) {
      const vec = this.staging(datagrams, i, end);
      const data = vec.data;
      const cap = data.length;
      const gsoMax = this.gsoMax;
      let m = 0;
      let off = 0;
      let prev: Dest | undefined;
      let slot = -1;
      // fill: one message per datagram, or per run of equal-size datagrams to one destination (GSO)
      while (m < this.batch && i < end) {
        const d = datagrams[i];
        const len = d.length;
        if (off + len > cap) break;
        const dest = each ? this.dest(each[i], `to[${i}]`) : one;
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
            if (each && this.dest(each[i + n], `to[${i + n}]`) !== dest) break;
            data.set(e, off + total);
            total += el;
            n++;
            if (el < len) break; // a shorter datagram ends the run
          }
        }
        vec.setMessage(m, off, total, slot, n > 1 ? len : 0);
        this.starts[m] = i;
        this.counts[m] = n;
        this.lens[m] = total;
        this.segs[m] = len;
        m++;
        i += n;
        off += total;
      }
      // send messages [0, m): a short count means message k would block or failed (retried alone)
      for (let k = 0; k < m; ) {
        const r = vec.send(this.fdValue, k, m - k);
        this.counters.calls++;
        if (r > 0) {
          for (let j = k; j < k + r; j++) {
            sent += this.counts[j];
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
          return sent;
        }
        if (this.counts[k] > 1 && (errno === EIO || errno === EINVAL || errno === EMSGSIZE)) {
          this.refuse(errno, this.segs[k]);
          i = this.starts[k]; // fill again from the refused run, without GSO at its size
          break;
        }
        const code = ERRNO_NAMES[errno] ?? `E${errno}`;
        this.counters.errorsByCode[code] = (this.counters.errorsByCode[code] ?? 0) + 1;
        throw new UdpSendError(errno, this.starts[k], this.counts[k], sent);
      }
    }
    return sent;
  }

  /** Remembers a refusal of GSO: all of it after EIO, this segment size and above otherwise. */
  private refuse(errno: number, segment: number): void {
    const code = ERRNO_NAMES[errno] ?? `E${errno}`;
    const first = this.refusal === undefined;
    if (errno === EIO) {
      this.gsoMax = 0;
      this.refusal = { code };
    } else {
      this.gsoMax = Math.min(this.gsoMax, segment - 1);
      this.refusal = { code, segment };
    }
    if (first)
      this.onWarning(
        `sockbuf: GSO refused (${code}${errno === EIO ? ': the device does not take UDP_SEGMENT' : `: segments of ${segment} bytes`}); those datagrams went one by one`,
      );
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
  async sendBatch(datagrams: readonly Uint8Array[], to?: UdpTarget | readonly UdpTarget[]): Promise<number> {
    if (this.opening) await this.opening;
    const end = datagrams?.length ?? 0;
    let at = 0;
    for (;;) {
      try {
        at += this.trySendBatch(datagrams, to, at, end);
      } catch (e) {
        if (e instanceof UdpSendError) e.sent += at;
        throw e;
      }
      if (at >= end) return end;
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

export function createUdpSender(options: UdpSenderOptions = {}): UdpSender {
  return new UdpSender(options);
}
