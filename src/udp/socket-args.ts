// node:dgram's argument shapes for send() and bind(), read the way Node 20's lib/dgram.js reads them
// (the same overloads, the same checks in the same order, the same errors). Pure.
import { BUFFER_TYPES, errArgType, errOutOfBounds, validatePort } from './dgram-errors.js';

/** The socket type: `udp4` or `udp6`. */
export type SocketType = 'udp4' | 'udp6';
export type LookupFunction = (
  hostname: string,
  family: number,
  callback: (err: Error | null, address: string, family?: number) => void,
) => void;

/** What createSocket takes, as node:dgram's createSocket does. */
export interface SocketOptions {
  type: SocketType;
  reuseAddr?: boolean;
  ipv6Only?: boolean;
  recvBufferSize?: number;
  sendBufferSize?: number;
  lookup?: LookupFunction;
  signal?: AbortSignal;
  /** sockbuf: receive buffer target once the socket receives, unless recvBufferSize is given (default 8 MiB, as the batched receiver). */
  rcvbuf?: number | string;
  /**
   * sockbuf: the longest a datagram may wait since it reached the kernel, in milliseconds, before it is
   * dropped and counted as stale (stats().stale) instead of handed over late. 0: no bound. Unset (the
   * default; the preload reads SOCKBUF_DGRAM_MAX_QUEUE_DELAY): a socket bound to a port it named gets
   * 20 once it sends (a request/response server), others none.
   */
  maxQueueDelay?: number;
  /**
   * sockbuf: nice levels above its process the shared reader thread asks for, best effort (default 0:
   * the process's own; SOCKBUF_DGRAM_READER_NICE). The thread is the process's: the most any socket asks wins.
   */
  readerNice?: number;
}

/** An address and port, as node:dgram's address() and rinfo give them. */
export interface AddressInfo {
  address: string;
  family: 'IPv4' | 'IPv6';
  port: number;
}

export type SendCallback = (error: Error | null, bytes?: number) => void;

/** One send() call, read: the datagram's bytes, where it goes (port 0 and no address when connected). */
export interface SendArgs {
  data: Uint8Array;
  port: number;
  address: string | undefined;
  callback: SendCallback | undefined;
}

const isView = (v: unknown): v is ArrayBufferView => ArrayBuffer.isView(v);
const bytesOf = (v: ArrayBufferView) =>
  v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

/** Node's sliceBuffer: `length` bytes of a string or view from `offset`. */
function slice(buffer: unknown, offset: unknown, length: unknown): Uint8Array {
  let b: ArrayBufferView;
  if (typeof buffer === 'string') b = Buffer.from(buffer);
  else if (isView(buffer)) b = buffer;
  else throw errArgType('buffer', BUFFER_TYPES, buffer);
  const off = (offset as number) >>> 0;
  const len = (length as number) >>> 0;
  if (off > b.byteLength) throw errOutOfBounds('offset');
  if (off + len > b.byteLength) throw errOutOfBounds('length');
  return new Uint8Array(b.buffer, b.byteOffset + off, len);
}

/** The datagram a buffer, a string or a list of them makes (a list is sent as one datagram). */
function payload(buffer: unknown): Uint8Array {
  if (typeof buffer === 'string') return Buffer.from(buffer);
  if (isView(buffer)) return bytesOf(buffer);
  if (!Array.isArray(buffer)) throw errArgType('buffer', BUFFER_TYPES, buffer);
  const parts: Uint8Array[] = [];
  for (const b of buffer) {
    if (typeof b === 'string') parts.push(Buffer.from(b));
    else if (isView(b)) parts.push(bytesOf(b));
    else throw errArgType('buffer list arguments', BUFFER_TYPES, buffer);
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/**
 * send(msg[, offset, length][, port][, address][, callback]) as node:dgram reads it. Throws what Node
 * throws for a bad buffer, bounds, port or address (ERR_SOCKET_BAD_PORT, ERR_BUFFER_OUT_OF_BOUNDS,
 * ERR_INVALID_ARG_TYPE, ERR_SOCKET_DGRAM_IS_CONNECTED from `connectedError`).
 */
export function readSendArgs(args: unknown[], connected: boolean, connectedError: () => Error): SendArgs {
  let [buffer, offset, length, port, address, callback] = args;
  if (!connected) {
    if (address || (port && typeof port !== 'function')) buffer = slice(buffer, offset, length);
    else {
      callback = port;
      port = offset;
      address = length;
    }
  } else {
    if (typeof length === 'number') {
      buffer = slice(buffer, offset, length);
      if (typeof port === 'function') {
        callback = port;
        port = null;
      }
    } else callback = offset;
    if (port || address) throw connectedError();
  }
  const data = payload(buffer);
  const p = connected ? 0 : validatePort(port, false);
  if (typeof callback !== 'function') callback = undefined;
  if (typeof address === 'function') {
    callback = address;
    address = undefined;
  } else if (address != null && typeof address !== 'string')
    throw errArgType('address', 'of type string', address);
  return {
    data,
    port: p,
    address: (address ?? undefined) as string | undefined,
    callback: callback as SendCallback,
  };
}

export interface BindOptions {
  port?: number;
  address?: string;
  exclusive?: boolean;
  fd?: number;
}

/** bind([port][, address][, callback]) or bind(options[, callback]): what to bind, and the callback. */
export function readBindArgs(args: unknown[]): {
  port: unknown;
  /** As given (a string, or what dns.lookup then refuses synchronously, as node:dgram's bind does). */
  address: unknown;
  exclusive: boolean;
  fd: number | undefined;
  callback: (() => void) | undefined;
} {
  const last = args.length ? args[args.length - 1] : undefined;
  const callback = typeof last === 'function' ? (last as () => void) : undefined;
  const [first, second] = args;
  if (first !== null && typeof first === 'object') {
    const o = first as BindOptions;
    return { port: o.port, address: o.address || '', exclusive: !!o.exclusive, fd: o.fd, callback };
  }
  const address = typeof second === 'function' || second == null ? '' : second;
  return {
    port: typeof first === 'function' ? 0 : first,
    address,
    exclusive: false,
    fd: undefined,
    callback,
  };
}
