// Drop counters outside the receiver: per socket (SO_MEMINFO sk_drops) and host-wide (Udp
// RcvbufErrors in /proc/net/snmp, IPv4 only; IPv6 counts in /proc/net/snmp6).
import { readSnmp } from '../observe/proc.js';
import { SK_MEMINFO, SO_MEMINFO, SOL_SOCKET } from '../sys/constants.js';
import { getOptionBuffer } from '../sys/socket.js';

/** Datagrams the kernel dropped before they reached this socket's queue (sk_drops). */
export function udpKernelDrops(fd: number): number {
  const b = getOptionBuffer(fd, SOL_SOCKET, SO_MEMINFO, 4 * SK_MEMINFO.VARS);
  return b.length > SK_MEMINFO.DROPS * 4 ? b.readUInt32LE(SK_MEMINFO.DROPS * 4) : 0;
}

/** Host-wide Udp RcvbufErrors now. */
export function observeUdpHost(): number {
  return readSnmp().Udp?.RcvbufErrors ?? 0;
}
