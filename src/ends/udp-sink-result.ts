// What `sink udp` reports at its end (its `result` line, sockbuf's JSON: keep the field names), and the
// accounting of every datagram sent. Pure.
import type { SequenceReport } from './udp-tracker.js';

/** What runUdpSink resolves with: received, lost, reordered and the kernel's and userspace drops. */
export interface UdpSinkResult {
  receiver: 'batch' | 'dgram';
  /** Data datagrams received (trailers not counted). */
  received: number;
  bytes: number;
  batches: number;
  packetsPerBatch: { mean: number; histogram: Record<string, number> };
  kernelDrops: number;
  /** 'datagrams', or 'gro-messages' when GRO was on: then a drop may have held up to 64 datagrams. */
  kernelDropsUnit: 'datagrams' | 'gro-messages';
  userspaceDrops: number;
  truncated: number;
  /** From the sequence numbers: sent (per the trailers, else highest + 1) − distinct received. */
  lost: number;
  reordered: number;
  duplicates: number;
  jitterUs: number;
  tailLost: number | null;
  /** When the last datagram arrived, ms since the epoch (null when none did). */
  lastReceivedAtMs: number | null;
  /** What the senders' trailers said they sent (null when a trailer did not arrive). */
  sent: number | null;
  unsequenced: number;
  flows: number;
  /** Trailer datagrams received, and sent as the trailers say (null when a flow's trailers all failed to come). */
  trailers: { sent: number | null; received: number };
  /**
   * Every datagram accounted for: sent = received + kernelDrops + userspaceDrops + truncated, counted
   * in datagrams with the trailers on both sides (`sent`: data and trailer copies sent; `accounted`:
   * every datagram delivered, trailers and unsequenced ones included, plus the drop counters). With
   * GRO the kernel counts a dropped coalesced message once, so the sequence numbers decide (`by`:
   * 'sequence-numbers'; sent = data received + lost). `unaccounted` = sent − accounted: 0 when
   * exact, null when a trailer did not tell what was sent.
   */
  accounting: {
    by: 'counters' | 'sequence-numbers';
    sent: number | null;
    accounted: number;
    unaccounted: number | null;
  };
  /** From the first datagram to the last. */
  seconds: number;
  datagramsPerSecond: number;
  jsCallsPerDatagram: number;
  /** Receive system calls made (recvmmsg for batch; node:dgram makes one recvmsg per datagram). */
  recvCalls: number;
  /** CPU time of the whole receiving process (all threads) while it ran, and per datagram received. */
  cpuSeconds: number;
  cpuUsPerDatagram: number;
  rcvbuf: number;
  hostRcvbufErrors: number;
  gro: boolean;
  sockets: number;
  /** Datagrams from another address than the far end's announced client (not counted anywhere else). */
  foreign?: number;
  /** Why a far end cut the test (one of serve's caps). */
  stopped?: string;
  batch?: number;
  slot?: number;
  coalesceSeconds?: number;
}

/** UdpSinkResult.accounting from the sequence report and the receiver's counters. */
export function account(
  gro: boolean,
  rep: SequenceReport,
  s: { received: number; kernelDrops: number; userspaceDrops?: number; truncated?: number },
): UdpSinkResult['accounting'] {
  if (gro) {
    const accounted = rep.unique + rep.lost;
    return {
      by: 'sequence-numbers',
      sent: rep.sent,
      accounted,
      unaccounted: rep.sent === null ? null : rep.sent - accounted,
    };
  }
  const sent = rep.sent === null || rep.trailers.sent === null ? null : rep.sent + rep.trailers.sent;
  const accounted = s.received + s.kernelDrops + (s.userspaceDrops ?? 0) + (s.truncated ?? 0);
  return { by: 'counters', sent, accounted, unaccounted: sent === null ? null : sent - accounted };
}
