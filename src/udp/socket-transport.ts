// What the dgram socket's send queue sends through. TEMPORARY: one sendto per datagram, until the
// application sender's trySendBatch (sendmmsg, GSO) lands; then this file becomes a UdpSender on the fd.
import { setTimeout as sleep } from 'node:timers/promises';
import { EAGAIN } from '../sys/constants.js';
import { sendOne } from '../sys/udp-socket.js';
import type { BatchTransport } from './socket-send.js';

export function socketTransport(fd: number): BatchTransport {
  return {
    trySendBatch(datagrams, to, from, end) {
      for (let i = from; i < end; i++) {
        const r = sendOne(fd, datagrams[i], to?.[i]);
        if (r === -EAGAIN) return i - from;
        if (r < 0) throw { errno: -r, index: i, count: 1 };
      }
      return end - from;
    },
    writable: (ms) => sleep(Math.min(ms, 1)),
  };
}
