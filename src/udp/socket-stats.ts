// What the dgram socket's stats() reports: the batched receiver's counters (every drop: the kernel's,
// the reader's, truncated) and the send queue's. Pure, but for reading the kernel's drop counter of a
// socket whose reader has not started.
import { udpKernelDrops } from './host.js';
import type { UdpReceiver } from './receiver.js';
import type { SendQueue } from './socket-send.js';

/** A sockbuf/dgram socket's counts: received, sent, and the drops a node:dgram socket never tells. */
export interface DgramSocketStats {
  /** Whether the reader thread runs (it starts once the socket is bound and has a 'message' or 'messages' listener). */
  reading: boolean;
  /** Datagrams handed to the listeners, and their bytes. */
  received: number;
  receivedBytes: number;
  /** Batches handed over ('messages' events). */
  batches: number;
  /** Dropped by the kernel: the receive buffer was full (SO_MEMINFO). */
  kernelDrops: number;
  /** Read and dropped by the reader (never, unless the ring was full and told to drop). */
  userspaceDrops: number;
  /** Taken from the kernel, not handed over yet. */
  queued: number;
  /** SO_RCVBUF as getsockopt reports it, once reading. */
  rcvbuf?: number;
  /** Datagrams and bytes the kernel took from send(), datagrams it refused, datagrams waiting to go. */
  sent: number;
  sentBytes: number;
  sendErrors: number;
  sendQueue: number;
}

export function socketStats(
  r: UdpReceiver | undefined,
  s: SendQueue | undefined,
  fd: number,
): DgramSocketStats {
  const rs = r?.stats();
  return {
    reading: rs?.started ?? false,
    received: rs?.received ?? 0,
    receivedBytes: rs?.bytes ?? 0,
    batches: rs?.batches ?? 0,
    kernelDrops: rs?.kernelDrops ?? (fd >= 0 ? udpKernelDrops(fd) : 0),
    userspaceDrops: rs?.userspaceDrops ?? 0,
    queued: rs?.queued ?? 0,
    ...(rs ? { rcvbuf: rs.rcvbuf } : {}),
    sent: s?.sent ?? 0,
    sentBytes: s?.sentBytes ?? 0,
    sendErrors: s?.errors ?? 0,
    sendQueue: s?.count ?? 0,
  };
}
