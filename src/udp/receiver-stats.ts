// What the batched receiver reports, and the sums behind it over its reader threads' counters. Pure.
import type { UdpRcvbufReport } from '../policy/buffers.js';
import { bucketLabel, COUNTER } from './ring.js';

/** A receiver's counts: received, batches, kernel and userspace drops, truncated, the buffer. */
export interface UdpReceiverStats {
  /** Datagrams handed to the consumer. */
  received: number;
  bytes: number;
  batches: number;
  packetsPerBatch: { mean: number; histogram: Record<string, number> };
  /** Dropped by the kernel before the socket (SO_MEMINFO sk_drops, summed over sockets). */
  kernelDrops: number;
  /** Read from the kernel and dropped because the ring was full (onFull: 'drop'). */
  userspaceDrops: number;
  /** Larger than a slot: counted, never delivered. */
  truncated: number;
  /** Taken from the kernel, not yet handed over. */
  queued: number;
  /** Taken from the kernel and still queued when the application closed the receiver: never handed over, not dropped either. */
  unread: number;
  /** Whether the reader threads run (they start at the first batch asked for, or start()). */
  started: boolean;
  /** Udp RcvbufErrors of the whole host (IPv4) since the receiver started. */
  hostRcvbufErrors: number;
  /** SO_RCVBUF as getsockopt reports it (doubled). */
  rcvbuf: number;
  rcvbufReport: UdpRcvbufReport;
  /** recvmmsg calls that returned datagrams, and the messages they returned (with GRO a message holds many datagrams). */
  readerCalls: number;
  readerMessages: number;
  /** JavaScript steps per datagram: batches / received. */
  jsCallsPerDatagram: number;
  gro: boolean;
  /** Why gro: 'auto' left GRO off (slots below 64 KiB, the kernel refused, SOCKBUF_DISABLE_GRO=1); absent when it is on or was not asked for. */
  groOff?: string;
  sockets: number;
}

/** The counters every reader thread keeps (ring.ts COUNTER), summed over the threads. */
export function readerCounters(rings: { counters: Float64Array }[]): {
  truncated: number;
  udrops: number;
  committed: number;
  calls: number;
  messages: number;
} {
  const sum = { truncated: 0, udrops: 0, committed: 0, calls: 0, messages: 0 };
  for (const r of rings) {
    sum.truncated += r.counters[COUNTER.TRUNCATED];
    sum.udrops += r.counters[COUNTER.USERSPACE_DROPS];
    sum.committed += r.counters[COUNTER.RECEIVED];
    sum.calls += r.counters[COUNTER.CALLS];
    sum.messages += r.counters[COUNTER.MESSAGES];
  }
  return sum;
}

/** Batches per size bucket, by the bucket's label; empty buckets left out. */
export function histogramByLabel(counts: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  counts.forEach((n, i) => {
    if (n) out[bucketLabel(i)] = n;
  });
  return out;
}
