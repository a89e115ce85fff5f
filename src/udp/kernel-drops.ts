// Drop counters outside the receiver: per socket (SO_MEMINFO sk_drops) and host-wide (Udp
// RcvbufErrors in /proc/net/snmp, IPv4 only; IPv6 counts in /proc/net/snmp6).
import { readSnmpOrEmpty } from '../observe/proc.js';
import { getMemInfo } from '../sys/meminfo.js';

/** Datagrams the kernel dropped before they reached this socket's queue (sk_drops). */
export function udpKernelDrops(fd: number): number {
  return getMemInfo(fd).drops ?? 0;
}

/** Host-wide Udp RcvbufErrors now. */
export function observeUdpHost(): number {
  return readSnmpOrEmpty().Udp?.RcvbufErrors ?? 0;
}
