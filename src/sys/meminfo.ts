// getsockopt(SOL_SOCKET, SO_MEMINFO): the socket's memory, as `ss -m` prints it (skmem:(r,rb,t,tb,…,d)).
// u32 values in the order of SK_MEMINFO_* (include/uapi/linux/sock_diag.h); a shorter reply from an
// older kernel leaves the missing ones undefined.
import { SK_MEMINFO, SO_MEMINFO, SOL_SOCKET } from './constants.js';
import { fn } from './libc.js';
import { getOptionBuffer } from './socket.js';

/** SO_MEMINFO of a socket, ss -m's skmem: the memory its queues hold and may hold. */
export interface MemInfo {
  /** r: bytes queued for reading (sk_rmem_alloc). */
  rmemAlloc: number;
  /** rb: the receive buffer limit, SO_RCVBUF as getsockopt reports it (already doubled). */
  rcvbuf: number;
  /** t: bytes sent to L3 and not yet freed (sk_wmem_alloc). */
  wmemAlloc: number;
  /** tb: the send buffer limit (SO_SNDBUF). */
  sndbuf: number;
  /** f: forward-allocated, cached memory. */
  fwdAlloc: number;
  /** w: queued for sending, not yet sent to L3. */
  wmemQueued: number;
  /** o: option memory. */
  optmem: number;
  /** bl: backlog queue length. */
  backlog?: number;
  /** d: packets dropped before they reached the socket's queue (sk_drops). */
  drops?: number;
}

const NAMES = [
  'rmemAlloc',
  'rcvbuf',
  'wmemAlloc',
  'sndbuf',
  'fwdAlloc',
  'wmemQueued',
  'optmem',
  'backlog',
  'drops',
] as const;

/** Decodes the SO_MEMINFO reply. Pure. */
export function decodeMemInfo(b: Buffer): MemInfo {
  const out: Record<string, number> = {};
  NAMES.forEach((name, i) => {
    if ((i + 1) * 4 <= b.length) out[name] = b.readUInt32LE(i * 4);
  });
  if (out.optmem === undefined) throw new RangeError(`SO_MEMINFO too short: ${b.length} bytes`);
  return out as unknown as MemInfo;
}

/** getsockopt(fd, SOL_SOCKET, SO_MEMINFO), decoded. Works on TCP and UDP sockets. */
export function getMemInfo(fd: number): MemInfo {
  return decodeMemInfo(getOptionBuffer(fd, SOL_SOCKET, SO_MEMINFO, 4 * SK_MEMINFO.VARS));
}

const queueBuf = Buffer.alloc(4 * SK_MEMINFO.VARS);
const queueWords = new Uint32Array(queueBuf.buffer, queueBuf.byteOffset, SK_MEMINFO.VARS);
const queueLen = Buffer.alloc(4);
/** receiveQueue()'s answer, one object for every call: read it before the next call. */
const queue = { rmemAlloc: 0, rcvbuf: 0, drops: 0 };

/**
 * A socket's receive queue from SO_MEMINFO (r, rb, d) without allocating, for a path that asks often
 * (a dgram socket every 64 datagrams): the same object each call, valid until the next; undefined
 * when getsockopt fails (a closed descriptor).
 */
export function receiveQueue(fd: number): Readonly<typeof queue> | undefined {
  queueLen.writeUInt32LE(queueBuf.length, 0);
  if (fn('getsockopt')(fd, SOL_SOCKET, SO_MEMINFO, queueBuf, queueLen) < 0) return undefined;
  queue.rmemAlloc = queueWords[0];
  queue.rcvbuf = queueWords[1];
  queue.drops = queueLen.readUInt32LE(0) >= 36 ? queueWords[8] : 0;
  return queue;
}
