// sockbuf's node:dgram-compatible socket (`sockbuf/dgram`): the life cycle, events, overloads and errors
// of Node 20's dgram.Socket, over a descriptor of its own. Underneath, it reads on the main thread as
// node:dgram does until that falls behind, then through the process's one reader thread (recvmmsg in
// batches, every drop counted: stats(); socket-receive.ts), and the datagrams send() queues in one
// tick leave in one sendmmsg. Where it differs from node:dgram, docs/dgram.md's table says so.
import dns from 'node:dns';
import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { applyUdpRcvbuf } from '../policy/apply.js';
import { udpRequest } from '../policy/buffers.js';
import { parseSize } from '../policy/units.js';
import {
  EBADF,
  EINVAL,
  IPPROTO_IPV6,
  IPV6_V6ONLY,
  SO_RCVBUF,
  SO_RCVBUFFORCE,
  SO_REUSEADDR,
  SO_TYPE,
  SOCK_DGRAM,
  SOL_SOCKET,
} from '../sys/constants.js';
import { closeFd } from '../sys/socket.js';
import { endpointOf, getInt, udpBind, udpConnect, udpDisconnect, udpSocket } from '../sys/udp-socket.js';
import {
  errAlreadyBound,
  errArgType,
  errBadType,
  errFdType,
  errIsConnected,
  errNotConnected,
  errNotRunning,
  errnoException,
  exceptionWithHostPort,
  validateAbortSignal,
  validatePort,
  validateUint32,
} from './dgram-errors.js';
import {
  type AddressInfo,
  type LookupFunction,
  readBindArgs,
  readSendArgs,
  type SendCallback,
  type SocketOptions,
  type SocketType,
} from './socket-args.js';
import { socketDefaults } from './socket-defaults.js';
import { SocketOptionsMixin } from './socket-options.js';
import { SocketReceiver } from './socket-receive.js';
import { type Destination, MAX_PAYLOAD, MAX_PAYLOAD6, SendQueue } from './socket-send.js';
import { type DgramSocketStats, socketStats } from './socket-stats.js';
import { socketTransport } from './socket-transport.js';

export type { AddressInfo, SocketOptions, SocketType } from './socket-args.js';
export type { DgramBatch, RemoteInfo } from './socket-receive.js';
export type { DgramSocketStats } from './socket-stats.js';

/** How the first socket with the default receive buffer got it (SO_RCVBUF or SO_RCVBUFFORCE, the size asked). */
let rcvbufRecipe: { name: number; value: number } | undefined;

/** A dgram socket: the same methods and events as node:dgram's, plus stats() and a 'messages' batch event. */
export class Socket extends SocketOptionsMixin {
  readonly type: SocketType;
  private readonly o: SocketOptions;
  private bindState: 'unbound' | 'binding' | 'bound' = 'unbound';
  private connectState: 'disconnected' | 'connecting' | 'connected' = 'disconnected';
  private queue: (() => void)[] | undefined;
  private referenced = true;
  private receiver: SocketReceiver | undefined;
  /** Bound to a port it named (a server's socket), not to an ephemeral one. */
  private namedPort = false;
  private sends: SendQueue | undefined;

  /** As node:dgram's: 'udp4' or 'udp6', or options; `listener` is added for 'message'. Prefer createSocket(). */
  constructor(type: SocketType | SocketOptions, listener?: (msg: Buffer, rinfo: unknown) => void) {
    const o: SocketOptions = type !== null && typeof type === 'object' ? { ...type } : { type };
    if (o.type !== 'udp4' && o.type !== 'udp6') throw errBadType();
    const d = socketDefaults();
    o.maxQueueDelay ??= d.maxQueueDelay;
    o.readerNice ??= d.readerNice;
    if (o.maxQueueDelay !== undefined && !(Number.isFinite(o.maxQueueDelay) && o.maxQueueDelay >= 0))
      throw errArgType('options.maxQueueDelay', 'a number of milliseconds >= 0', o.maxQueueDelay);
    if (!(Number.isInteger(o.readerNice) && o.readerNice >= 0 && o.readerNice <= 39))
      throw errArgType('options.readerNice', 'a whole number from 0 to 39', o.readerNice);
    if (o.lookup !== undefined && typeof o.lookup !== 'function')
      throw errArgType('lookup', 'of type function', o.lookup);
    super(o.type === 'udp6' ? 6 : 4);
    this.type = o.type;
    this.o = o;
    if (o.recvBufferSize) validateUint32(o.recvBufferSize, 'options.recvBufferSize');
    if (o.sendBufferSize) validateUint32(o.sendBufferSize, 'options.sendBufferSize');
    if (typeof listener === 'function') this.on('message', listener);
    const signal = o.signal;
    validateAbortSignal(signal, 'options.signal');
    if (signal !== undefined) {
      const onAbort = () => {
        if (this.isOpen) this.close();
      };
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        this.once('close', () => signal.removeEventListener('abort', onAbort));
      }
    }
  }

  private healthCheck(): void {
    if (!this.isOpen) throw errNotRunning();
  }

  /** Resolves `address` as node:dgram does (dns.lookup, or the lookup option; '' is the loopback). */
  private lookup(address: string, cb: (err: Error | null, ip?: string) => void): void {
    const host = address || (this.family === 4 ? '127.0.0.1' : '::1');
    const custom = this.o.lookup;
    if (!custom && isIP(host)) return void process.nextTick(cb, null, host);
    (custom ?? (dns.lookup as unknown as LookupFunction))(host, this.family, (err, ip) => cb(err, ip));
  }

  /** −EINVAL for an address of the other family (libuv refuses those), else 0. */
  private familyOf(ip: string): number {
    return isIP(ip) === this.family ? 0 : -EINVAL;
  }

  /** As node:dgram's bind([port][, address][, callback]) or bind(options[, callback]): the reader thread starts once bound. */
  bind(port?: unknown, address?: unknown, callback?: () => void): this;
  bind(...args: unknown[]): this {
    this.healthCheck();
    if (this.bindState !== 'unbound') throw errAlreadyBound();
    const a = readBindArgs(args);
    // as node:dgram: the port as a uint32, cut to 16 bits ('abc', null → 0; 1.5, true → 1; 70000 → 4464)
    const rawPort = a.port;
    const port = (Number(rawPort || 0) >>> 0) & 0xffff;
    this.namedPort = port !== 0;
    this.bindState = 'binding';
    if (a.callback) {
      const cb = a.callback;
      const onListening = () => {
        this.removeListener('error', removeListeners);
        cb.call(this);
      };
      const removeListeners = () => {
        this.removeListener('error', removeListeners);
        this.removeListener('listening', onListening);
      };
      this.on('error', removeListeners);
      this.on('listening', onListening);
    }
    if (a.fd !== undefined) {
      // node:dgram's bind({ fd }): adopt a UDP socket made elsewhere (closed on close()); 'listening' at once
      if (!Number.isInteger(a.fd) || getInt(a.fd, SOL_SOCKET, SO_TYPE) !== SOCK_DGRAM) {
        this.bindState = 'unbound';
        throw errFdType();
      }
      this.fd = a.fd;
      this.startListening();
      return this;
    }
    // a non-string address goes to the lookup as node:dgram's does: dns.lookup throws ERR_INVALID_ARG_TYPE now
    const address = (a.address || (this.family === 4 ? '0.0.0.0' : '::')) as string;
    this.lookup(address, (err, ip) => {
      if (!this.isOpen) return;
      if (err || !ip) {
        this.bindState = 'unbound';
        this.emit('error', err);
        return;
      }
      const failed = (r: number) => {
        this.bindState = 'unbound';
        this.emit('error', exceptionWithHostPort(r, 'bind', ip, rawPort));
      };
      if (this.familyOf(ip)) return failed(-EINVAL);
      // as libuv: a socket made by an earlier (failed) bind or by addMembership is bound again
      let fd = this.fd;
      if (fd < 0) {
        fd = udpSocket(this.family);
        if (fd < 0) return failed(fd);
        this.fd = fd;
        if (this.o.reuseAddr) this.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1);
        if (this.o.ipv6Only && this.family === 6) this.setOption(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
      }
      const r = udpBind(fd, ip, port);
      if (r < 0) return failed(r);
      this.startListening();
    });
    return this;
  }

  protected override implicitBind(): number {
    const fd = udpSocket(this.family);
    if (fd < 0) return fd;
    this.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1); // libuv's UV_UDP_REUSEADDR for this bind
    const r = udpBind(fd, this.family === 4 ? '0.0.0.0' : '::', 0);
    if (r < 0) {
      closeFd(fd);
      return r;
    }
    this.fd = fd;
    return fd;
  }

  private startListening(): void {
    this.bindState = 'bound';
    const fd = this.fd;
    if (this.o.recvBufferSize) this.setRecvBufferSize(this.o.recvBufferSize);
    else if (this.o.rcvbuf !== undefined) applyUdpRcvbuf(fd, parseSize(this.o.rcvbuf, 'rcvbuf'));
    else if (rcvbufRecipe) {
      if (rcvbufRecipe.value) this.setOption(fd, SOL_SOCKET, rcvbufRecipe.name, rcvbufRecipe.value);
    } else {
      const rep = applyUdpRcvbuf(fd);
      // what it took, replayed on the next sockets: one setsockopt, not sysctl reads and five calls
      if (rep.met)
        rcvbufRecipe = {
          name: rep.forced ? SO_RCVBUFFORCE : SO_RCVBUF,
          value: rep.got === rep.was ? 0 : udpRequest(rep.wanted),
        };
    }
    if (this.o.sendBufferSize) this.setSendBufferSize(this.o.sendBufferSize);
    this.sends = new SendQueue(socketTransport(fd), this.family === 6 ? MAX_PAYLOAD6 : MAX_PAYLOAD);
    // reading starts now, as node:dgram's (a datagram with no 'message' listener is read and dropped)
    this.receiver = new SocketReceiver(fd, this.type, this, {
      maxQueueDelay: this.o.maxQueueDelay,
      readerNice: this.o.readerNice ?? 0,
      prestart: this.namedPort,
    });
    if (!this.referenced) this.receiver.setRef(false);
    this.emit('listening');
  }

  private enqueue(f: () => void): void {
    if (this.queue === undefined) {
      this.queue = [];
      const onError = () => {
        this.removeListener('listening', onListening);
        this.queue = undefined;
      };
      const onListening = () => {
        this.removeListener(EventEmitter.errorMonitor, onError);
        const q = this.queue ?? [];
        this.queue = undefined;
        for (const g of q) g();
      };
      this.once(EventEmitter.errorMonitor, onError);
      this.once('listening', onListening);
    }
    this.queue.push(f);
  }

  /** As node:dgram's send(): what one tick queues goes out in one sendmmsg call. */
  send(msg: unknown, ...rest: unknown[]): void {
    const connected = this.connectState === 'connected';
    const a = readSendArgs([msg, ...rest], connected, errIsConnected);
    this.healthCheck();
    if (this.bindState === 'unbound') this.bind({ port: 0, exclusive: true }, null);
    const go = () => this.dispatch(a.data, a.port, a.address, a.callback);
    // as node:dgram, whose queued send runs send() again with port '0' made 0: that throws, after bind
    if (this.bindState !== 'bound')
      this.enqueue(a.port === 0 && !connected ? () => validatePort(0, false) : go);
    else go();
  }

  private dispatch(
    data: Uint8Array,
    port: number,
    address: string | undefined,
    cb: SendCallback | undefined,
  ) {
    const sends = this.sends;
    if (!sends || !this.isOpen) return;
    if (this.namedPort) this.receiver?.answers(); // a server that answers: its queue gets a bound
    if (this.connectState === 'connected') return sends.push(data, undefined, cb);
    this.lookup(address ?? '', (err, ip) => {
      if (!this.isOpen) return;
      if (err || !ip) {
        if (cb) return void process.nextTick(cb, err);
        return void process.nextTick(() => this.emit('error', err));
      }
      if (this.familyOf(ip)) {
        if (cb) process.nextTick(cb, exceptionWithHostPort(-EINVAL, 'send', address, port));
        return;
      }
      // port 0 ('0' passes node's check): node:dgram sends with no address, and the kernel says EDESTADDRREQ
      if (port === 0) return sends.push(data, { shown: address }, cb);
      sends.push(data, { address: ip, port } satisfies Destination, cb);
    });
  }

  /** As node:dgram's connect(port[, address][, callback]). */
  connect(port: unknown, address?: unknown, callback?: () => void): void {
    const p = validatePort(port, false);
    let addr = address;
    let cb = callback;
    if (typeof addr === 'function') {
      cb = addr as () => void;
      addr = '';
    } else if (addr === undefined) addr = '';
    if (typeof addr !== 'string') throw errArgType('address', 'of type string', addr);
    this.healthCheck();
    if (this.connectState !== 'disconnected') throw errIsConnected();
    this.connectState = 'connecting';
    if (this.bindState === 'unbound') this.bind({ port: 0, exclusive: true }, null);
    const go = () => this.doConnect(p, addr as string, cb);
    if (this.bindState !== 'bound') this.enqueue(go);
    else go();
  }

  private doConnect(port: number, address: string, callback: ((e?: Error) => void) | undefined): void {
    if (callback) this.once('connect', callback);
    this.lookup(address, (err, ip) => {
      if (!this.isOpen) return;
      let ex = err;
      if (!ex && ip) {
        const r = this.familyOf(ip) || udpConnect(this.fd, ip, port);
        if (r < 0) ex = exceptionWithHostPort(r, 'connect', address, port);
      }
      if (ex) {
        this.connectState = 'disconnected';
        return void process.nextTick(() => {
          if (callback) {
            this.removeListener('connect', callback);
            callback(ex);
          } else this.emit('error', ex);
        });
      }
      this.connectState = 'connected';
      process.nextTick(() => this.emit('connect'));
    });
  }

  /** As node:dgram's disconnect(): ERR_SOCKET_DGRAM_NOT_CONNECTED when not connected. */
  disconnect(): void {
    if (this.connectState !== 'connected') throw errNotConnected();
    const r = udpDisconnect(this.fd);
    if (r < 0) throw errnoException(r, 'connect');
    this.connectState = 'disconnected';
  }

  /** The bound address, as node:dgram's address(). */
  address(): AddressInfo {
    this.healthCheck();
    return this.endpoint(false, 'getsockname');
  }

  /** The connected peer's address, as node:dgram's remoteAddress(). */
  remoteAddress(): AddressInfo {
    this.healthCheck();
    if (this.connectState !== 'connected') throw errNotConnected();
    return this.endpoint(true, 'getpeername');
  }

  private endpoint(peer: boolean, syscall: string): AddressInfo {
    const ep = this.fd < 0 ? -EBADF : endpointOf(this.fd, peer);
    if (typeof ep === 'number') throw errnoException(ep, syscall);
    return { address: ep.host, family: ep.family === 6 ? 'IPv6' : 'IPv4', port: ep.port };
  }

  /** Closes the socket and stops its reader, as node:dgram's close(); 'close' is emitted on the next tick. */
  close(callback?: () => void): this {
    if (typeof callback === 'function') this.on('close', callback);
    if (this.queue !== undefined) {
      this.queue.push(() => this.close());
      return this;
    }
    this.healthCheck();
    this.isOpen = false;
    this.sends?.close();
    const fd = this.fd;
    this.fd = -1;
    // the receiver closes the descriptor (in the reader thread, when that has it)
    if (this.receiver) this.receiver.close();
    else if (fd >= 0) closeFd(fd);
    process.nextTick(() => this.emit('close'));
    return this;
  }

  /** As node:dgram's ref(): an open socket keeps the process alive. */
  ref(): this {
    this.referenced = true;
    if (this.isOpen) this.receiver?.setRef(true);
    return this;
  }

  /** As node:dgram's unref(): the socket alone does not keep the process alive. */
  unref(): this {
    this.referenced = false;
    this.receiver?.setRef(false);
    return this;
  }

  /** Bytes queued for sending and not yet handed to the kernel. */
  getSendQueueSize(): number {
    return this.sends?.bytes ?? 0;
  }

  /** Datagrams queued for sending and not yet handed to the kernel. */
  getSendQueueCount(): number {
    return this.sends?.count ?? 0;
  }

  /** sockbuf: what the socket received, what the kernel and the reader dropped, what it sent. */
  stats(): DgramSocketStats {
    return socketStats(this.receiver, this.sends, this.fd);
  }

  /** Closes the socket (`await using`); resolves on close. */
  [Symbol.asyncDispose](): Promise<void> {
    if (!this.isOpen) return Promise.resolve();
    return new Promise((resolve) => this.close(() => resolve()));
  }
}

/** node:dgram's createSocket(type | options[, listener]). */
export function createSocket(
  type: SocketType | SocketOptions,
  listener?: (msg: Buffer, rinfo: import('./socket-receive.js').RemoteInfo) => void,
): Socket {
  return new Socket(type, listener as (msg: Buffer, rinfo: unknown) => void);
}
