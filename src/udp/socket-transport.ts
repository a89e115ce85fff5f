// What the dgram socket's send queue sends through: the application sender (sendmmsg, GSO for runs of
// equal-size datagrams to one destination) on the socket's own descriptor, which it never closes.
import { writable } from '../sys/mmsg.js';
import { UdpSender } from './sender.js';
import type { BatchTransport } from './socket-send.js';

export function socketTransport(fd: number): BatchTransport {
  const sender = new UdpSender({ fd });
  return {
    trySendBatch: (datagrams, to, from, end) => sender.trySendBatch(datagrams, to, from, end),
    writable: (ms) => writable(fd, ms),
  };
}
