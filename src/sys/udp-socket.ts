// The calls the node:dgram-compatible socket (src/udp/socket.ts) makes on its raw descriptor: a UDP
// socket of a family, bind, UDP connect and disconnect (AF_UNSPEC), the local and the peer's address,
// shutdown of the read side (it wakes a reader thread blocked in ppoll at once), int options, and
// multicast membership with its structs (ip_mreq, ip_mreq_source, ipv6_mreq, group_source_req).
// Each returns its result or −errno, as libuv does, so that the socket builds Node's own errors.
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import {
  AF_INET,
  AF_INET6,
  EINVAL,
  ENODEV,
  IP_ADD_MEMBERSHIP,
  IP_ADD_SOURCE_MEMBERSHIP,
  IP_DROP_MEMBERSHIP,
  IP_DROP_SOURCE_MEMBERSHIP,
  IP_MULTICAST_IF,
  IPPROTO_IP,
  IPPROTO_IPV6,
  IPV6_ADD_MEMBERSHIP,
  IPV6_DROP_MEMBERSHIP,
  IPV6_MULTICAST_IF,
  MCAST_JOIN_SOURCE_GROUP,
  MCAST_LEAVE_SOURCE_GROUP,
  MSG_DONTWAIT,
  SHUT_RD,
  SOCK_CLOEXEC,
  SOCK_DGRAM,
  SOCK_NONBLOCK,
} from './constants.js';
import { errno, fn } from './libc.js';
import { decodeSockaddr, type Endpoint, encodeSockaddr, ipv6Bytes, SOCKADDR_STORAGE } from './sockaddr.js';

const rc = (r: number) => (r < 0 ? -errno() : r);

/** A non-blocking UDP socket of `family`: its descriptor, or −errno. */
export function udpSocket(family: 4 | 6): number {
  return rc(fn('socket')(family === 6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

/** bind(2) to an address (IPv4 or IPv6 text); 0 or −errno. */
export function udpBind(fd: number, host: string, port: number): number {
  const sa = encodeSockaddr({ host, port });
  return rc(fn('bind')(fd, sa, sa.length));
}

const last: { host: string; port: number; sa: Buffer } = { host: '', port: -1, sa: Buffer.alloc(0) };

/** One datagram, sendto(2) (or send(2) to the connected peer without `to`), MSG_DONTWAIT: bytes or −errno. */
export function udpSendOne(
  fd: number,
  data: Uint8Array,
  to: { address: string; port: number } | undefined,
): number {
  if (!to) return rc(Number(fn('send')(fd, data, data.length, MSG_DONTWAIT)));
  // the last destination's sockaddr is kept: a reply, a client's queries go to the same one
  if (to.address !== last.host || to.port !== last.port) {
    last.sa = encodeSockaddr({ host: to.address, port: to.port });
    last.host = to.address;
    last.port = to.port;
  }
  const sa = last.sa;
  return rc(Number(fn('sendto')(fd, data, data.length, MSG_DONTWAIT, sa, sa.length)));
}

/** connect(2) of a UDP socket (sets its default peer, sends nothing); 0 or −errno. */
export function udpConnect(fd: number, host: string, port: number): number {
  const sa = encodeSockaddr({ host, port });
  return rc(fn('connect')(fd, sa, sa.length));
}

/** Dissolves a UDP socket's association (connect to AF_UNSPEC); 0 or −errno. */
export function udpDisconnect(fd: number): number {
  return rc(fn('connect')(fd, Buffer.alloc(16), 16));
}

/** The socket's own address (getsockname) or its peer's (getpeername), or −errno. */
export function endpointOf(fd: number, peer: boolean): Endpoint | number {
  const b = Buffer.alloc(SOCKADDR_STORAGE);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(SOCKADDR_STORAGE, 0);
  const r = rc(fn(peer ? 'getpeername' : 'getsockname')(fd, b, len));
  return r < 0 ? r : (decodeSockaddr(b) ?? -EINVAL);
}

/** shutdown(fd, SHUT_RD): a thread waiting in ppoll for the socket wakes at once. Errors ignored (ENOTCONN). */
export function shutdownRead(fd: number): void {
  fn('shutdown')(fd, SHUT_RD);
}

/** setsockopt with an int value; 0 or −errno. */
export function setInt(fd: number, level: number, name: number, value: number): number {
  const b = Buffer.alloc(4);
  b.writeInt32LE(value, 0);
  return rc(fn('setsockopt')(fd, level, name, b, 4));
}

/** getsockopt of an int; the value (≥ 0 for the options asked here) or −errno. */
export function getInt(fd: number, level: number, name: number): number {
  const b = Buffer.alloc(4);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(4, 0);
  const r = rc(fn('getsockopt')(fd, level, name, b, len));
  return r < 0 ? r : b.readInt32LE(0);
}

const setBuf = (fd: number, level: number, name: number, b: Buffer) =>
  rc(fn('setsockopt')(fd, level, name, b, b.length));

/** The 4 bytes of an IPv4 address. */
const v4 = (host: string) => encodeSockaddr({ host, port: 0 }).subarray(4, 8);

/**
 * The interface index an IPv6 scope names (`fe80::1%eth0`, `::%2`): its number, or the index of the
 * interface of that name; 0 for none, −ENODEV for an unknown name.
 */
export function scopeIndex(host: string | undefined): number {
  const zone = host?.split('%')[1];
  if (!zone) return 0;
  if (/^\d+$/.test(zone)) return Number(zone);
  try {
    return Number(readFileSync(`/sys/class/net/${zone}/ifindex`, 'utf8'));
  } catch {
    return -ENODEV;
  }
}

/**
 * Joins (or leaves) the multicast group `group` on the interface `iface` names (IPv4: its address; IPv6:
 * a scope, `::%eth0`), as libuv's uv_udp_set_membership; 0 or −errno.
 */
export function membership(
  fd: number,
  family: 4 | 6,
  group: string,
  iface: string | undefined,
  join: boolean,
) {
  if (family === 4) {
    if (!isIPv4(group) || (iface !== undefined && !isIPv4(iface))) return -EINVAL;
    const b = Buffer.alloc(8); // struct ip_mreq
    v4(group).copy(b, 0);
    if (iface !== undefined) v4(iface).copy(b, 4);
    return setBuf(fd, IPPROTO_IP, join ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP, b);
  }
  if (!isIPv6(group.split('%')[0])) return -EINVAL;
  const index = scopeIndex(iface);
  if (index < 0) return index;
  const b = Buffer.alloc(20); // struct ipv6_mreq
  ipv6Bytes(group).copy(b, 0);
  b.writeUInt32LE(index, 16);
  return setBuf(fd, IPPROTO_IPV6, join ? IPV6_ADD_MEMBERSHIP : IPV6_DROP_MEMBERSHIP, b);
}

/** Joins (or leaves) a source-specific group (IPv4: ip_mreq_source; IPv6: group_source_req); 0 or −errno. */
export function sourceMembership(
  fd: number,
  family: 4 | 6,
  source: string,
  group: string,
  iface: string | undefined,
  join: boolean,
): number {
  if (family === 4) {
    if (!isIPv4(group) || !isIPv4(source) || (iface !== undefined && !isIPv4(iface))) return -EINVAL;
    const b = Buffer.alloc(12); // struct ip_mreq_source: multiaddr, interface, sourceaddr
    v4(group).copy(b, 0);
    if (iface !== undefined) v4(iface).copy(b, 4);
    v4(source).copy(b, 8);
    return setBuf(fd, IPPROTO_IP, join ? IP_ADD_SOURCE_MEMBERSHIP : IP_DROP_SOURCE_MEMBERSHIP, b);
  }
  if (!isIPv6(group.split('%')[0]) || !isIPv6(source.split('%')[0])) return -EINVAL;
  const index = scopeIndex(iface);
  if (index < 0) return index;
  // struct group_source_req: u32 interface, 4 bytes of padding, two sockaddr_storage (128 bytes each)
  const b = Buffer.alloc(8 + 2 * SOCKADDR_STORAGE);
  b.writeUInt32LE(index, 0);
  encodeSockaddr({ host: group, port: 0 }).copy(b, 8);
  encodeSockaddr({ host: source, port: 0 }).copy(b, 8 + SOCKADDR_STORAGE);
  return setBuf(fd, IPPROTO_IPV6, join ? MCAST_JOIN_SOURCE_GROUP : MCAST_LEAVE_SOURCE_GROUP, b);
}

/** The interface multicast leaves by (IPv4: an address of it; IPv6: a scope, `::%eth0`); 0 or −errno. */
export function multicastInterface(fd: number, family: 4 | 6, iface: string): number {
  if (family === 4) {
    if (!isIPv4(iface)) return -EINVAL;
    return setBuf(fd, IPPROTO_IP, IP_MULTICAST_IF, Buffer.from(v4(iface)));
  }
  if (!isIPv6(iface.split('%')[0])) return -EINVAL;
  const index = scopeIndex(iface);
  if (index < 0) return index;
  const b = Buffer.alloc(4);
  b.writeInt32LE(index, 0);
  return setBuf(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, b);
}
