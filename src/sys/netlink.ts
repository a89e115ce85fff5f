// A netlink request and its multipart answer: socket(AF_NETLINK), sendto the kernel, recv until the
// caller says the dump is complete. Knows nothing of what the messages mean (src/observe/sockdiag.ts
// encodes the request and parses the answer).

import {
  AF_NETLINK,
  EAGAIN,
  EINTR,
  EMSGSIZE,
  MSG_TRUNC,
  SO_RCVTIMEO,
  SOCK_CLOEXEC,
  SOCK_RAW,
  SOL_SOCKET,
} from './constants.js';
import { call, errno, fn } from './libc.js';
import { closeFd, setOptionBuffer } from './socket.js';
import { SysError } from './sys-error.js';

export interface NetlinkDumpOptions {
  /** Give up when the kernel sends nothing for this long (SO_RCVTIMEO). */
  timeoutMs?: number;
  /** Receive buffer per recv; netlink never splits a message across datagrams. */
  chunkBytes?: number;
}

/**
 * Sends `request` (a complete nlmsghdr + payload) on a NETLINK `protocol` socket and hands each
 * received datagram to `onChunk` until it returns true (the caller saw NLMSG_DONE or an error).
 * The chunk is a view into a reused buffer: copy what you keep.
 */
export function netlinkDump(
  protocol: number,
  request: Uint8Array,
  onChunk: (chunk: Buffer) => boolean,
  opts: NetlinkDumpOptions = {},
): void {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const size = opts.chunkBytes ?? 65536;
  const fd = call('socket', AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  try {
    const tv = Buffer.alloc(16); // struct timeval { long tv_sec; long tv_usec; }
    tv.writeBigInt64LE(BigInt(Math.floor(timeoutMs / 1000)), 0);
    tv.writeBigInt64LE(BigInt((timeoutMs % 1000) * 1000), 8);
    setOptionBuffer(fd, SOL_SOCKET, SO_RCVTIMEO, tv);
    const kernel = Buffer.alloc(12); // struct sockaddr_nl, nl_pid 0 = the kernel
    kernel.writeUInt16LE(AF_NETLINK, 0);
    const req = Buffer.from(request.buffer, request.byteOffset, request.byteLength);
    call('sendto', fd, req, req.length, 0, kernel, kernel.length);
    const buf = Buffer.alloc(size);
    for (;;) {
      const r = fn('recv')(fd, buf, size, MSG_TRUNC);
      const n = typeof r === 'bigint' ? Number(r) : r;
      if (n < 0) {
        const e = errno();
        if (e === EINTR) continue;
        throw new SysError('recv', e, e === EAGAIN ? `netlink: no answer within ${timeoutMs} ms` : 'netlink');
      }
      if (n > size) throw new SysError('recv', EMSGSIZE, `netlink datagram of ${n} bytes exceeds ${size}`);
      if (n === 0 || onChunk(buf.subarray(0, n))) return;
    }
  } finally {
    closeFd(fd);
  }
}
