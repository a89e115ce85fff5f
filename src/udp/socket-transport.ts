// What the dgram socket's send queue sends through: the application sender (sendmmsg, GSO for runs of
// equal-size datagrams to one destination) on the socket's own descriptor, which it never closes. A
// tick that queued a single datagram sends it with one sendto, as node:dgram would: the sender and its
// staging memory are made only for a socket that sends more than one datagram at a time.
import { EAGAIN, EINTR } from '../sys/constants.js';
import { writable } from '../sys/mmsg.js';
import { udpSendOne } from '../sys/udp-socket.js';
import { UdpSender } from './sender.js';
import type { BatchTransport } from './socket-send.js';

export function socketTransport(fd: number): BatchTransport {
  let sender: UdpSender | undefined;
  return {
    trySendBatch: (datagrams, to, from, end) => {
      if (end - from === 1) {
        let r = udpSendOne(fd, datagrams[from], to?.[from]);
        while (r === -EINTR) r = udpSendOne(fd, datagrams[from], to?.[from]);
        if (r >= 0) return 1;
        if (r === -EAGAIN) return 0;
        throw { errno: -r, index: from, count: 1 };
      }
      sender ??= new UdpSender({ fd });
      return sender.trySendBatch(datagrams, to, from, end);
    },
    writable: (ms) => writable(fd, ms),
  };
}
