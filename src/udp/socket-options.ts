// The dgram socket's option methods, as node:dgram has them: buffer sizes, broadcast, TTL, multicast
// TTL, loopback, interface and membership (any-source and source-specific). Each throws what Node
// throws: EBADF before bind ('setTTL EBADF'), EINVAL for a value libuv refuses, ERR_* for bad types.
import { EventEmitter } from 'node:events';
import {
  EBADF,
  EINVAL,
  IP_MULTICAST_LOOP,
  IP_MULTICAST_TTL,
  IP_TTL,
  IPPROTO_IP,
  IPPROTO_IPV6,
  IPV6_MULTICAST_HOPS,
  IPV6_MULTICAST_LOOP,
  IPV6_UNICAST_HOPS,
  SO_BROADCAST,
  SO_RCVBUF,
  SO_SNDBUF,
  SOL_SOCKET,
} from '../sys/constants.js';
import { getInt, membership, multicastInterface, setInt, sourceMembership } from '../sys/udp-socket.js';
import {
  errArgType,
  errBadBufferSize,
  errBufferSize,
  errMissingArgs,
  errNotRunning,
  errnoException,
} from './dgram-errors.js';

export class SocketOptionsMixin extends EventEmitter {
  /** The socket's descriptor once bound (−1 before, and after close). */
  protected fd = -1;
  /** False once close() was called (node:dgram's handle is gone). */
  protected isOpen = true;
  /** setRecvBufferSize() was called: the receiver leaves the size alone. */
  protected recvBufferSet = false;

  constructor(protected readonly family: 4 | 6) {
    super();
  }

  /**
   * libuv binds a socket that joins or leaves a group before bind() (to the any address, port 0), and so does
   * this: the descriptor, or −errno. The socket stays unbound to bind() (a later bind() fails EINVAL).
   */
  protected implicitBind(): number {
    return -EBADF;
  }

  /** setsockopt that reports nothing (options the socket sets on itself before bind). */
  protected setOption(fd: number, level: number, name: number, value: number): void {
    setInt(fd, level, name, value);
  }

  /** Throws Node's ErrnoException for a −errno result. */
  private check(r: number, syscall: string): void {
    if (r < 0) throw errnoException(r, syscall);
  }

  private setIntChecked(level: number, name: number, value: number, syscall: string): void {
    this.check(this.fd < 0 ? -EBADF : setInt(this.fd, level, name, value), syscall);
  }

  private bufferSize(size: number, which: 'recv' | 'send'): number {
    if (size >>> 0 !== size) throw errBadBufferSize();
    if (this.fd < 0) throw errBufferSize(-EBADF, which);
    const name = which === 'recv' ? SO_RCVBUF : SO_SNDBUF;
    const r = size === 0 ? getInt(this.fd, SOL_SOCKET, name) : setInt(this.fd, SOL_SOCKET, name, size);
    if (r < 0) throw errBufferSize(r, which);
    return r;
  }

  /** SO_RCVBUF, as node:dgram's (the kernel clamps it to rmem_max, then doubles it). */
  setRecvBufferSize(size: number): void {
    this.bufferSize(size, 'recv');
    this.recvBufferSet = true;
  }

  /** SO_RCVBUF as getsockopt reports it. */
  getRecvBufferSize(): number {
    return this.bufferSize(0, 'recv');
  }

  /** SO_SNDBUF, as node:dgram's (the kernel clamps it to wmem_max, then doubles it). */
  setSendBufferSize(size: number): void {
    this.bufferSize(size, 'send');
  }

  /** SO_SNDBUF as getsockopt reports it. */
  getSendBufferSize(): number {
    return this.bufferSize(0, 'send');
  }

  /** SO_BROADCAST on or off. */
  setBroadcast(flag: boolean): void {
    this.setIntChecked(SOL_SOCKET, SO_BROADCAST, flag ? 1 : 0, 'setBroadcast');
  }

  /** The unicast TTL (IPv6: hop limit), 1 to 255. */
  setTTL(ttl: number): number {
    if (typeof ttl !== 'number') throw errArgType('ttl', 'of type number', ttl);
    const r = ttl < 1 || ttl > 255 ? -EINVAL : 0;
    this.check(this.fd < 0 ? -EBADF : r, 'setTTL');
    const six = this.family === 6;
    this.setIntChecked(six ? IPPROTO_IPV6 : IPPROTO_IP, six ? IPV6_UNICAST_HOPS : IP_TTL, ttl, 'setTTL');
    return ttl;
  }

  /** The multicast TTL (IPv6: hop limit), 0 to 255. */
  setMulticastTTL(ttl: number): number {
    if (typeof ttl !== 'number') throw errArgType('ttl', 'of type number', ttl);
    this.check(this.fd < 0 ? -EBADF : ttl < 0 || ttl > 255 ? -EINVAL : 0, 'setMulticastTTL');
    const six = this.family === 6;
    const name = six ? IPV6_MULTICAST_HOPS : IP_MULTICAST_TTL;
    this.setIntChecked(six ? IPPROTO_IPV6 : IPPROTO_IP, name, ttl, 'setMulticastTTL');
    return ttl;
  }

  /** IP_MULTICAST_LOOP (IPv6: IPV6_MULTICAST_LOOP) on or off; returns `flag`. */
  setMulticastLoopback(flag: boolean): boolean {
    const six = this.family === 6;
    const name = six ? IPV6_MULTICAST_LOOP : IP_MULTICAST_LOOP;
    this.setIntChecked(six ? IPPROTO_IPV6 : IPPROTO_IP, name, flag ? 1 : 0, 'setMulticastLoopback');
    return flag;
  }

  /** The interface outgoing multicast leaves by, as node:dgram's. */
  setMulticastInterface(interfaceAddress: string): void {
    if (!this.isOpen) throw errNotRunning();
    if (typeof interfaceAddress !== 'string')
      throw errArgType('interfaceAddress', 'of type string', interfaceAddress);
    const r = this.fd < 0 ? -EBADF : multicastInterface(this.fd, this.family, interfaceAddress);
    this.check(r, 'setMulticastInterface');
  }

  private member(group: unknown, iface: unknown, join: boolean): void {
    if (!this.isOpen) throw errNotRunning();
    if (!group) throw errMissingArgs('multicastAddress');
    const syscall = join ? 'addMembership' : 'dropMembership';
    const i = iface == null ? undefined : String(iface);
    const fd = this.fd < 0 ? this.implicitBind() : this.fd;
    const r = fd < 0 ? fd : membership(fd, this.family, String(group), i, join);
    this.check(r, syscall);
  }

  /** Joins a multicast group (IP_ADD_MEMBERSHIP), as node:dgram's. */
  addMembership(multicastAddress: string, interfaceAddress?: string): void {
    this.member(multicastAddress, interfaceAddress, true);
  }

  /** Leaves a multicast group (IP_DROP_MEMBERSHIP), as node:dgram's. */
  dropMembership(multicastAddress: string, interfaceAddress?: string): void {
    this.member(multicastAddress, interfaceAddress, false);
  }

  private sourceMember(source: unknown, group: unknown, iface: unknown, join: boolean): void {
    if (!this.isOpen) throw errNotRunning();
    if (typeof source !== 'string') throw errArgType('sourceAddress', 'of type string', source);
    if (typeof group !== 'string') throw errArgType('groupAddress', 'of type string', group);
    const syscall = join ? 'addSourceSpecificMembership' : 'dropSourceSpecificMembership';
    const i = iface == null ? undefined : String(iface);
    const fd = this.fd < 0 ? this.implicitBind() : this.fd;
    const r = fd < 0 ? fd : sourceMembership(fd, this.family, source, group, i, join);
    this.check(r, syscall);
  }

  /** Joins a source-specific multicast group, as node:dgram's. */
  addSourceSpecificMembership(sourceAddress: string, groupAddress: string, interfaceAddress?: string): void {
    this.sourceMember(sourceAddress, groupAddress, interfaceAddress, true);
  }

  /** Leaves a source-specific multicast group, as node:dgram's. */
  dropSourceSpecificMembership(sourceAddress: string, groupAddress: string, interfaceAddress?: string): void {
    this.sourceMember(sourceAddress, groupAddress, interfaceAddress, false);
  }
}
