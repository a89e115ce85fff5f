// struct mmsghdr / msghdr / iovec / cmsghdr as raw memory (LP64: x86_64 and aarch64), and the
// recvmmsg, sendmmsg and ppoll calls over them. Nothing else: batching, rings and splitting live in
// src/udp. Every pointer inside these structs is the address of a Buffer the MsgVec keeps alive.
import {
  AF_INET,
  IPPROTO_UDP,
  MSG_DONTWAIT,
  POLLIN,
  POLLOUT,
  SO_TIMESTAMPNS,
  SOCK_CLOEXEC,
  SOCK_DGRAM,
  SOL_SOCKET,
  UDP_GRO,
  UDP_SEGMENT,
} from './constants.js';
import { addressOf, callAsync, errno, fn, timespec } from './libc.js';

/** sizeof(struct mmsghdr) (a 56-byte msghdr and msg_len, padded), sizeof(struct iovec) on LP64 Linux. */
export const MMSGHDR_SIZE = 64;
export const IOVEC_SIZE = 16;
/** Room for a sockaddr_in6 (28 bytes), rounded to 8. */
export const NAME_SIZE = 32;
/** CMSG_SPACE(sizeof(struct timespec)): one cmsghdr and a 64-bit timespec (SO_TIMESTAMPNS). */
export const CMSG_TIMESPEC_SPACE = 32;
/** CMSG_SPACE(sizeof(int)): one cmsghdr (16 bytes) and an int, aligned to 8. */
export const CMSG_INT_SPACE = 24;

const OFF_NAME = 0;
const OFF_NAMELEN = 8;
const OFF_IOV = 16;
const OFF_IOVLEN = 24;
const OFF_CONTROL = 32;
const OFF_CONTROLLEN = 40;
const OFF_FLAGS = 48;
const OFF_MSGLEN = 56;

export interface MsgVecOptions {
  /** How many messages (mmsghdr entries). */
  count: number;
  /** Where the kernel writes each sender's address: `count * NAME_SIZE` bytes, or none. */
  names?: Buffer;
  /** Bytes of control-message space per message (0: none). CMSG_INT_SPACE fits one UDP_GRO cmsg. */
  controlBytes?: number;
}

/**
 * An array of struct mmsghdr, each with one iovec. Point each entry at its data with setIov(); the
 * caller keeps the data memory alive (a Buffer over a SharedArrayBuffer does not move).
 */
export class MsgVec {
  readonly count: number;
  readonly hdr: Buffer;
  readonly iov: Buffer;
  readonly names: Buffer | undefined;
  readonly control: Buffer | undefined;
  readonly controlBytes: number;
  /** hdr as 32-bit words: every field the receive path reads or resets sits on a 4-byte boundary. */
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  private readonly keep: (Buffer | Uint8Array)[] = [];

  constructor(o: MsgVecOptions) {
    this.count = o.count;
    this.hdr = Buffer.alloc(o.count * MMSGHDR_SIZE);
    this.u32 = new Uint32Array(this.hdr.buffer, this.hdr.byteOffset, this.hdr.length >> 2);
    this.i32 = new Int32Array(this.hdr.buffer, this.hdr.byteOffset, this.hdr.length >> 2);
    this.iov = Buffer.alloc(o.count * IOVEC_SIZE);
    this.names = o.names;
    this.controlBytes = o.controlBytes ?? 0;
    this.control = this.controlBytes > 0 ? Buffer.alloc(o.count * this.controlBytes) : undefined;
    if (this.names && this.names.length < o.count * NAME_SIZE) throw new RangeError('names too small');
    const iovBase = addressOf(this.iov);
    const nameBase = this.names ? addressOf(this.names) : 0n;
    const ctlBase = this.control ? addressOf(this.control) : 0n;
    for (let i = 0; i < o.count; i++) {
      const h = i * MMSGHDR_SIZE;
      this.hdr.writeBigUInt64LE(iovBase + BigInt(i * IOVEC_SIZE), h + OFF_IOV);
      this.hdr.writeBigUInt64LE(1n, h + OFF_IOVLEN);
      if (this.names) this.hdr.writeBigUInt64LE(nameBase + BigInt(i * NAME_SIZE), h + OFF_NAME);
      if (this.control) this.hdr.writeBigUInt64LE(ctlBase + BigInt(i * this.controlBytes), h + OFF_CONTROL);
    }
    this.prepare(0, o.count);
  }

  /** Points entry i's iovec at `len` bytes of `buf` from `offset`. */
  setIov(i: number, buf: Buffer | Uint8Array, offset: number, len: number): void {
    if (!this.keep.includes(buf)) this.keep.push(buf);
    this.iov.writeBigUInt64LE(addressOf(buf) + BigInt(offset), i * IOVEC_SIZE);
    this.iov.writeBigUInt64LE(BigInt(len), i * IOVEC_SIZE + 8);
  }

  /** Changes only the length of entry i's iovec (for sends of varying size). */
  setIovLength(i: number, len: number): void {
    this.iov.writeUInt32LE(len, i * IOVEC_SIZE + 8);
  }

  /** Resets the in/out fields the kernel rewrites (name length, control length, flags) before a receive. */
  prepare(from: number, n: number): void {
    const w = this.u32;
    const nameLen = this.names ? NAME_SIZE : 0;
    for (let i = from; i < from + n; i++) {
      const h = (i * MMSGHDR_SIZE) >> 2;
      w[h + (OFF_NAMELEN >> 2)] = nameLen;
      w[h + (OFF_CONTROLLEN >> 2)] = this.controlBytes;
      w[h + (OFF_FLAGS >> 2)] = 0;
      w[h + (OFF_MSGLEN >> 2)] = 0;
    }
  }

  /** msg_len: bytes received (or sent) for entry i. */
  msgLen(i: number): number {
    return this.u32[(i * MMSGHDR_SIZE + OFF_MSGLEN) >> 2];
  }

  /** msg_flags of entry i after a receive (MSG_TRUNC, MSG_CTRUNC …). */
  msgFlags(i: number): number {
    return this.i32[(i * MMSGHDR_SIZE + OFF_FLAGS) >> 2];
  }

  /**
   * When entry i reached its socket's queue (SO_TIMESTAMPNS: wall-clock µs, the kernel's clock), or
   * 0 when the kernel attached no stamp.
   */
  arrivalUs(i: number): number {
    const c = this.control;
    if (!c) return 0;
    let p = i * this.controlBytes;
    const end = p + this.u32[(i * MMSGHDR_SIZE + OFF_CONTROLLEN) >> 2];
    while (p + 32 <= end) {
      const len = c.readUInt32LE(p);
      if (len < 16) return 0;
      if (c.readInt32LE(p + 8) === SOL_SOCKET && c.readInt32LE(p + 12) === SO_TIMESTAMPNS)
        return (
          c.readUInt32LE(p + 16) * 1e6 + c.readUInt32LE(p + 20) * 2 ** 32 * 1e6 + c.readUInt32LE(p + 24) / 1e3
        );
      p += (len + 7) & ~7;
    }
    return 0;
  }

  /** The UDP_GRO segment size the kernel attached to entry i, or 0 when the message is one datagram. */
  groSegmentSize(i: number): number {
    const c = this.control;
    if (!c) return 0;
    const used = this.u32[(i * MMSGHDR_SIZE + OFF_CONTROLLEN) >> 2];
    return findIntCmsg(c, i * this.controlBytes, used, IPPROTO_UDP, UDP_GRO) ?? 0;
  }
}

/**
 * The int payload of the first control message of (level, type) in `len` bytes of `buf` from
 * `offset`, walking cmsghdrs as CMSG_NXTHDR does. Pure.
 */
export function findIntCmsg(buf: Buffer, offset: number, len: number, level: number, type: number) {
  let p = offset;
  const end = offset + len;
  while (p + 16 <= end) {
    const cmsgLen = Number(buf.readBigUInt64LE(p));
    if (cmsgLen < 16 || p + cmsgLen > end) return undefined;
    if (buf.readInt32LE(p + 8) === level && buf.readInt32LE(p + 12) === type && cmsgLen >= 20) {
      return cmsgLen >= 24 ? buf.readInt32LE(p + 16) : buf.readUInt16LE(p + 16);
    }
    p += (cmsgLen + 7) & ~7;
  }
  return undefined;
}

/** The address of a view's first byte, as a number (user-space addresses fit in 2^53). */
export function addressOfView(view: Uint8Array): number {
  return Number(addressOf(view));
}

/** CMSG_SPACE(sizeof(u16)): one cmsghdr (16 bytes) and a u16 segment size, aligned to 8. */
export const CMSG_U16_SPACE = 24;
const TWO_32 = 4294967296;

/**
 * The send side: `count` struct mmsghdr, each with one iovec into `data` (where the caller copies
 * the payloads), an optional destination (one of `count` sockaddr slots) and an optional UDP_SEGMENT
 * control message (GSO: the kernel cuts the message into datagrams of that size, the last one may be
 * shorter). Pointers are written as two 32-bit words from numeric addresses (user-space addresses fit
 * in 2^53), so that filling a message allocates nothing and calls nothing.
 */
export class SendVec {
  readonly count: number;
  readonly data: Buffer;
  readonly hdr: Buffer;
  private readonly iov: Buffer;
  private readonly names: Buffer;
  private readonly control: Buffer;
  private readonly h32: Uint32Array;
  private readonly iov32: Uint32Array;
  private readonly ctl16: Uint16Array;
  private readonly nameLens: Uint32Array;
  private readonly dataBase: number;
  private readonly iovBase: number;
  private readonly namesBase: number;
  private readonly ctlBase: number;

  constructor(count: number, dataBytes: number) {
    this.count = count;
    this.data = Buffer.allocUnsafeSlow(dataBytes);
    this.hdr = Buffer.alloc(count * MMSGHDR_SIZE);
    this.iov = Buffer.alloc(count * IOVEC_SIZE);
    this.names = Buffer.alloc(count * NAME_SIZE);
    this.control = Buffer.alloc(count * CMSG_U16_SPACE);
    this.h32 = new Uint32Array(this.hdr.buffer, this.hdr.byteOffset, this.hdr.length >> 2);
    this.iov32 = new Uint32Array(this.iov.buffer, this.iov.byteOffset, this.iov.length >> 2);
    this.ctl16 = new Uint16Array(this.control.buffer, this.control.byteOffset, this.control.length >> 1);
    this.nameLens = new Uint32Array(count);
    this.dataBase = Number(addressOf(this.data));
    this.iovBase = Number(addressOf(this.iov));
    this.namesBase = Number(addressOf(this.names));
    this.ctlBase = Number(addressOf(this.control));
    for (let i = 0; i < count; i++) {
      const h = (i * MMSGHDR_SIZE) >> 2;
      this.put(h + (OFF_IOV >> 2), this.iovBase + i * IOVEC_SIZE);
      this.h32[h + (OFF_IOVLEN >> 2)] = 1;
      // struct cmsghdr { u64 cmsg_len = CMSG_LEN(2) = 18; i32 level = SOL_UDP; i32 type = UDP_SEGMENT }
      this.control.writeBigUInt64LE(18n, i * CMSG_U16_SPACE);
      this.control.writeInt32LE(IPPROTO_UDP, i * CMSG_U16_SPACE + 8);
      this.control.writeInt32LE(UDP_SEGMENT, i * CMSG_U16_SPACE + 12);
    }
  }

  /** A 64-bit pointer at 32-bit word `w` of hdr. */
  private put(w: number, addr: number): void {
    this.h32[w] = addr >>> 0;
    this.h32[w + 1] = Math.floor(addr / TWO_32);
  }

  /** Puts a destination (struct sockaddr_in or _in6) in slot `slot`, for setMessage. */
  setName(slot: number, sockaddr: Buffer): void {
    sockaddr.copy(this.names, slot * NAME_SIZE);
    this.nameLens[slot] = sockaddr.length;
  }

  /**
   * Message i: `length` bytes of data from `offset`, to the destination in `slot` (−1: the socket's
   * connected peer), cut into datagrams of `segment` bytes by the kernel (0: one datagram).
   */
  setMessage(i: number, offset: number, length: number, slot: number, segment: number): void {
    this.setMessageAt(i, this.dataBase + offset, length, slot, segment);
  }

  /**
   * setMessage with the data elsewhere: at address `addr` (from addressOfView of a buffer the caller
   * keeps alive and unchanged until the send returns).
   */
  setMessageAt(i: number, addr: number, length: number, slot: number, segment: number): void {
    const v = i << 2;
    this.iov32[v] = addr >>> 0;
    this.iov32[v + 1] = Math.floor(addr / TWO_32);
    this.iov32[v + 2] = length;
    const h = (i * MMSGHDR_SIZE) >> 2;
    if (slot < 0) {
      this.h32[h] = 0;
      this.h32[h + 1] = 0;
      this.h32[h + (OFF_NAMELEN >> 2)] = 0;
    } else {
      this.put(h, this.namesBase + slot * NAME_SIZE);
      this.h32[h + (OFF_NAMELEN >> 2)] = this.nameLens[slot];
    }
    if (segment > 0) {
      this.put(h + (OFF_CONTROL >> 2), this.ctlBase + i * CMSG_U16_SPACE);
      this.h32[h + (OFF_CONTROLLEN >> 2)] = CMSG_U16_SPACE;
      this.ctl16[(i * CMSG_U16_SPACE + 16) >> 1] = segment;
    } else {
      this.h32[h + (OFF_CONTROL >> 2)] = 0;
      this.h32[h + (OFF_CONTROL >> 2) + 1] = 0;
      this.h32[h + (OFF_CONTROLLEN >> 2)] = 0;
    }
  }

  /** sendmmsg(fd, messages [from, from + n), MSG_DONTWAIT): the count sent, or −errno. */
  send(fd: number, from: number, n: number): number {
    const r = fn('sendmmsg')(fd, from ? this.hdr.subarray(from * MMSGHDR_SIZE) : this.hdr, n, MSG_DONTWAIT);
    return r < 0 ? -errno() : r;
  }
}

/** recvmmsg(fd, vec[from..from+n), n, flags, NULL): the count received, or −errno. */
export function recvmmsg(fd: number, vec: MsgVec, from: number, n: number, flags: number): number {
  const r = fn('recvmmsg')(fd, from ? vec.hdr.subarray(from * MMSGHDR_SIZE) : vec.hdr, n, flags, null);
  return r < 0 ? -errno() : r;
}

/** sendmmsg(fd, vec[from..from+n), n, flags): the count sent, or −errno. @internal (exported for its test) */
export function sendmmsg(fd: number, vec: MsgVec, from: number, n: number, flags: number): number {
  const r = fn('sendmmsg')(fd, from ? vec.hdr.subarray(from * MMSGHDR_SIZE) : vec.hdr, n, flags);
  return r < 0 ? -errno() : r;
}

/** ppoll on one fd for POLLIN with nanosecond timeouts (poll's milliseconds are too coarse to coalesce). */
export class ReadableWaiter {
  private readonly pfd = Buffer.alloc(8);
  private readonly ts = Buffer.alloc(16);
  constructor(fd: number) {
    this.pfd.writeInt32LE(fd, 0);
    this.pfd.writeInt16LE(POLLIN, 4);
  }
  /** Waits up to `ns` nanoseconds; true when the fd is readable (or has an error to report). */
  wait(ns: number): boolean {
    timespec(ns, this.ts);
    this.pfd.writeInt16LE(0, 6);
    const r = fn('ppoll')(this.pfd, 1, this.ts, null);
    return r > 0;
  }

  /** Sleeps `ns` nanoseconds whatever arrives (ppoll on no fd), so that datagrams can pile up. */
  nap(ns: number): void {
    fn('ppoll')(null, 0, timespec(ns, this.ts), null);
  }
}

/**
 * Resolves when `fd` can take a send (POLLOUT) or after `ms`, whichever comes first: poll(2) in
 * koffi's worker pool, so the event loop runs meanwhile. Resolves true when writable.
 */
export async function writable(fd: number, ms: number): Promise<boolean> {
  const pfd = Buffer.alloc(8);
  pfd.writeInt32LE(fd, 0);
  pfd.writeInt16LE(POLLOUT, 4);
  const r = await callAsync('poll', pfd, 1, ms);
  return r > 0;
}

/** Whether this kernel offers UDP_SEGMENT (GSO on send, 4.18+) and UDP_GRO (GRO on receive, 5.0+). */
export function probeUdpOffload(): { segment: boolean; gro: boolean } {
  const fd = fn('socket')(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return { segment: false, gro: false };
  try {
    const v = Buffer.alloc(4);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(4, 0);
    const segment = fn('getsockopt')(fd, IPPROTO_UDP, UDP_SEGMENT, v, len) === 0;
    v.writeInt32LE(1, 0);
    const gro = fn('setsockopt')(fd, IPPROTO_UDP, UDP_GRO, v, 4) === 0;
    return { segment, gro };
  } finally {
    fn('close')(fd);
  }
}
