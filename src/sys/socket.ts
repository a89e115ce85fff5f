// Socket calls on raw file descriptors, and the bridge between those descriptors and Node's net.
import net from 'node:net';
import {
  AF_INET,
  AF_INET6,
  EBADF,
  EINPROGRESS,
  ETIMEDOUT,
  F_GETFL,
  F_SETFL,
  IPPROTO_TCP,
  O_NONBLOCK,
  POLLOUT,
  SO_ERROR,
  SOCK_CLOEXEC,
  SOL_SOCKET,
  TCP_CONGESTION,
} from './constants.js';
import { call, callAsync, errno as errnoNow, fn, timespec } from './libc.js';
import { decodeSockaddr, type Endpoint, encodeSockaddr, SOCKADDR_STORAGE } from './sockaddr.js';
import { SockbufError } from './sockbuf-error.js';
import { SysError } from './sys-error.js';

/** socket(2) for the family of `host` (IPv4 or IPv6). */
export function createSocket(host: string, type: number, protocol = 0): number {
  const family = host.includes(':') ? AF_INET6 : AF_INET;
  return call('socket', family, type | SOCK_CLOEXEC, protocol);
}

export function setIntOption(fd: number, level: number, name: number, value: number): void {
  const b = Buffer.alloc(4);
  b.writeInt32LE(value, 0);
  if (fn('setsockopt')(fd, level, name, b, 4) < 0)
    throw new SysError('setsockopt', errnoNow(), `${level}/${name}`);
}

export function getIntOption(fd: number, level: number, name: number): number {
  return getOptionBuffer(fd, level, name, 4).readInt32LE(0);
}

/** getsockopt into a buffer of `size` bytes; the result is cut to the length the kernel wrote. */
export function getOptionBuffer(fd: number, level: number, name: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(size, 0);
  if (fn('getsockopt')(fd, level, name, b, len) < 0)
    throw new SysError('getsockopt', errnoNow(), `${level}/${name}`);
  return b.subarray(0, len.readUInt32LE(0));
}

/** A TCP socket's congestion control ("cubic", "bbr" …; TCP_CONGESTION); undefined once it is closed. */
export function tcpCongestion(socket: net.Socket): string | undefined {
  try {
    const b = getOptionBuffer(fdOf(socket), IPPROTO_TCP, TCP_CONGESTION, 16); // TCP_CA_NAME_MAX
    const z = b.indexOf(0);
    return b.toString('latin1', 0, z < 0 ? b.length : z) || undefined;
  } catch {
    return undefined;
  }
}

export function setOptionBuffer(fd: number, level: number, name: number, value: Buffer): void {
  if (fn('setsockopt')(fd, level, name, value, value.length) < 0) {
    throw new SysError('setsockopt', errnoNow(), `${level}/${name}`);
  }
}

export function bindFd(fd: number, ep: { host: string; port: number }): void {
  const sa = encodeSockaddr(ep);
  call('bind', fd, sa, sa.length);
}

export function listenFd(fd: number, backlog = 511): void {
  call('listen', fd, backlog);
}

/**
 * Connects `fd` without blocking the event loop: a non-blocking connect, then ppoll for writability
 * in koffi's pool, then SO_ERROR, so a failure carries its own errno (ECONNREFUSED, EHOSTUNREACH,
 * ETIMEDOUT …). `timeoutSeconds` bounds the wait (default: the kernel's SYN retries, ~2 min); past
 * it, SysError ETIMEDOUT. The fd is left non-blocking, as Node wants it.
 */
export async function connectFd(
  fd: number,
  ep: { host: string; port: number },
  timeoutSeconds?: number,
): Promise<void> {
  const where = ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`;
  const sa = encodeSockaddr(ep);
  setNonBlocking(fd, true);
  if (fn('connect')(fd, sa, sa.length) === 0) return;
  const e = errnoNow();
  if (e !== EINPROGRESS) throw new SysError('connect', e, where);
  const pfd = Buffer.alloc(8);
  pfd.writeInt32LE(fd, 0);
  pfd.writeInt16LE(POLLOUT, 4);
  const ts = timeoutSeconds === undefined ? null : timespec(timeoutSeconds * 1e9);
  const n = await callAsync('ppoll', pfd, 1, ts, null);
  if (n === 0) throw new SysError('connect', ETIMEDOUT, where);
  const err = getIntOption(fd, SOL_SOCKET, SO_ERROR);
  if (err) throw new SysError('connect', err, where);
}

export function closeFd(fd: number): void {
  fn('close')(fd);
}

export function setNonBlocking(fd: number, on = true): void {
  const flags = call('fcntl', fd, F_GETFL, 0);
  call('fcntl', fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

export function localEndpoint(fd: number): Endpoint | undefined {
  const b = Buffer.alloc(SOCKADDR_STORAGE);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(SOCKADDR_STORAGE, 0);
  call('getsockname', fd, b, len);
  return decodeSockaddr(b);
}

// ---- Node bridge --------------------------------------------------------------------------

interface HandleLike {
  fd?: number;
}

/** The kernel file descriptor behind a net.Socket, net.Server or dgram.Socket (Node internals). */
export function fdOf(s: net.Socket | net.Server | object): number {
  // biome-ignore lint/suspicious/noExplicitAny: Node internals
  const anyS = s as any;
  const handle: HandleLike | undefined = anyS?._handle ?? anyS?.[Symbol.for('sockbuf.handle')];
  const fd = handle?.fd;
  if (typeof fd !== 'number' || fd < 0)
    throw new SockbufError('socket has no file descriptor (not open yet, or closed)', 'EBADF', {
      errno: EBADF,
    });
  return fd;
}

export type OnRead = {
  /** A function is called after every read: undefined keeps the buffer it gave before (not the first time). */
  buffer: Uint8Array | (() => Uint8Array | undefined);
  callback: (n: number, buf: Uint8Array) => boolean | undefined;
};

/**
 * A net.Socket over a connected socket made here; Node owns the fd from now on. With `paused`, the
 * socket reads nothing from the kernel until `resume()` (Node's internal `pauseOnCreate`, the option
 * behind net.Server's pauseOnConnect): the kernel keeps the bytes, and its window holds the peer.
 */
export function socketFromFd(
  fd: number,
  onread?: OnRead,
  paused = false,
  writableHighWaterMark?: number,
): net.Socket {
  setNonBlocking(fd);
  return new net.Socket({
    fd,
    readable: true,
    writable: true,
    onread,
    pauseOnCreate: paused,
    ...(writableHighWaterMark === undefined ? {} : { writableHighWaterMark }),
  } as net.SocketConstructorOpts);
}

/** server.listen on a listening socket made here (its options, e.g. SO_RCVBUF, pass to accepted sockets). */
export function listenOnFd(server: net.Server, fd: number): Promise<void> {
  setNonBlocking(fd);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ fd }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Node 20 ignores `onread` for accepted sockets. For a server made with pauseOnConnect: true, this
 * moves the accepted socket's handle into a new net.Socket that reads through `onread`. The new
 * socket is created paused (it reads nothing until `resume()`), as the accepted one was. It is also
 * the way to give an accepted socket its own writableHighWaterMark (Node fixes it at construction).
 */
export function rewrapAccepted(
  accepted: net.Socket,
  onread: OnRead | undefined,
  writableHighWaterMark?: number,
): net.Socket {
  // biome-ignore lint/suspicious/noExplicitAny: Node internals
  const a = accepted as any;
  const handle = a._handle;
  if (!handle) throw new SockbufError('accepted socket has no handle', 'EBADF', { errno: EBADF });
  a._handle = null;
  handle.owner = null;
  const s = new net.Socket({
    handle,
    readable: true,
    writable: true,
    onread,
    pauseOnCreate: true,
    ...(writableHighWaterMark === undefined ? {} : { writableHighWaterMark }),
  } as net.SocketConstructorOpts);
  accepted.destroy();
  return s;
}
