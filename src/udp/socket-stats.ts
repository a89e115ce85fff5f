// What the dgram socket's stats() reports: what it received and how (on the main thread or through
// the reader thread), every drop (the kernel's, the reader's, stale), and the send queue's counts.
import { getMemInfo } from '../sys/meminfo.js';
import type { SocketReceiver } from './socket-receive.js';
import type { SendQueue } from './socket-send.js';

/** A sockbuf/dgram socket's counts: received, sent, and the drops a node:dgram socket never tells. */
export interface DgramSocketStats {
  /** Whether the socket reads (from bind to close, as node:dgram's). */
  reading: boolean;
  /** Where it reads now: 'main' (the event loop, as node:dgram) or 'thread' (the shared reader thread). */
  mode: 'main' | 'thread' | 'closed' | 'unbound';
  /** Times it went to the reader thread because the main thread fell behind. */
  handovers: number;
  /** Datagrams handed to the listeners, and their bytes. */
  received: number;
  receivedBytes: number;
  /** Hand-overs ('messages' events): one per datagram on the main thread, one per batch from the thread. */
  batches: number;
  /** Dropped by the kernel: the receive buffer was full (SO_MEMINFO). */
  kernelDrops: number;
  /** Read and dropped by the reader thread: its ring was full and the socket has a queue bound. */
  userspaceDrops: number;
  /** Dropped because they waited in userspace longer than maxQueueDelay. */
  stale: number;
  /** SO_RCVBUF as getsockopt reports it, while open. */
  rcvbuf?: number;
  /** Longer than 65 536 bytes: read, cut, counted, not handed over. */
  truncated: number;
  /** Datagrams and bytes the kernel took from send(), datagrams it refused, datagrams waiting to go. */
  sent: number;
  sentBytes: number;
  sendErrors: number;
  sendQueue: number;
}

export function socketStats(
  r: SocketReceiver | undefined,
  s: SendQueue | undefined,
  fd: number,
): DgramSocketStats {
  const c = r?.readerCounts() ?? { drops: 0, truncated: 0 };
  const m = fd >= 0 ? getMemInfo(fd) : undefined;
  const mode = !r
    ? 'unbound'
    : r.mode === 'closed'
      ? 'closed'
      : r.mode === 'main' || r.mode === 'starting'
        ? 'main'
        : 'thread';
  return {
    reading: mode === 'main' || mode === 'thread',
    mode,
    handovers: r?.handovers ?? 0,
    received: r?.received ?? 0,
    receivedBytes: r?.receivedBytes ?? 0,
    batches: r?.batches ?? 0,
    kernelDrops: m ? (m.drops ?? 0) : (r?.finalKernelDrops ?? 0),
    ...(m ? { rcvbuf: m.rcvbuf } : {}),
    userspaceDrops: c.drops,
    stale: r?.stale ?? 0,
    truncated: c.truncated,
    sent: s?.sent ?? 0,
    sentBytes: s?.sentBytes ?? 0,
    sendErrors: s?.errors ?? 0,
    sendQueue: s?.count ?? 0,
  };
}
