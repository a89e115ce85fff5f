// The TCP findings that need one socket only, so that the host that pinned (or stalled) can tell
// alone, with the peer on another machine: a pinned receive buffer seen from the receiver, a pinned
// send buffer seen from the sender, a stalled reader seen from either end. Each returns the evidence
// in words, or undefined. Pure: a sock_diag record (and the previous one of the same socket) in.
// What the kernel shows for each, measured, is in docs/diagnosis.md.
import { ADVICE } from '../policy/advice.js';
import { formatSize } from '../policy/units.js';
import type { DiagSocket } from './sockdiag.js';

/** "Far below" the autotuning maximum: at most this fraction of it. */
export const FAR_BELOW = 1 / 8;
/** A socket carries load when it was busy sending at least this share of the interval. */
export const LOADED = 0.5;
/** Nothing received for this long, with a zero window: the reader stalled. */
export const STALLED_MS = 1000;

/** One socket now, the same socket at the previous sample, and the seconds between. */
export interface Sample {
  s: DiagSocket;
  old?: DiagSocket;
  seconds?: number;
}

const size = (n: number) => formatSize(n);
const ms = (us: number) =>
  `${us >= 10_000 ? Math.round(us / 1000) : (us / 1000).toFixed(us >= 100 ? 1 : 3)} ms`;
/** Bytes per second in words: `2.5 MB/s`, `95 KB/s`. */
export const rateText = (bps: number) =>
  bps >= 1e6 ? `${(bps / 1e6).toPrecision(3)} MB/s` : `${Math.round(bps / 1e3)} KB/s`;

/** Bytes per second over the interval of a counter of tcp_info, or undefined without one. */
export function intervalRate(x: Sample, k: 'bytesAcked' | 'bytesReceived'): number | undefined {
  const now = x.s.tcpInfo?.[k];
  const then = x.old?.tcpInfo?.[k];
  if (now === undefined || then === undefined || !x.seconds) return undefined;
  return Math.max(0, now - then) / x.seconds;
}

/** Share of the interval (of the connection's life, without one) busy sending, in [0, 1]. */
export function busyShare(x: Sample): number | undefined {
  const t = x.s.tcpInfo;
  if (t?.busyTime === undefined) return undefined;
  const o = x.old?.tcpInfo?.busyTime;
  if (o === undefined || !x.seconds) return undefined;
  return Math.min(1, Math.max(0, (t.busyTime - o) / 1e6 / x.seconds));
}

/**
 * The receiving end of a stalled reader: bytes wait in its receive queue, its window is zero (or,
 * on a kernel without tcpi_rcv_wnd, the queue holds half its buffer) and nothing arrived for a
 * second, nor since the previous sample. A slow reader opens its window again; this one does not.
 */
export function stalledReceiver(x: Sample): string | undefined {
  const { s, old } = x;
  const t = s.tcpInfo;
  const m = s.skmem;
  if (!t || !m || s.stateName !== 'established' || s.rqueue <= 0 || t.lastDataRecv < STALLED_MS)
    return undefined;
  const zero = t.rcvWnd !== undefined ? t.rcvWnd === 0 : m.rmemAlloc * 2 >= m.rcvbuf;
  if (!zero) return undefined;
  if (old?.tcpInfo?.bytesReceived !== undefined && (t.bytesReceived ?? 0) > old.tcpInfo.bytesReceived)
    return undefined;
  return (
    `stalled reader: ${size(s.rqueue)} wait in its receive queue (buffer ${size(m.rcvbuf)}), ` +
    `it advertises a zero window and nothing arrived for ${(t.lastDataRecv / 1000).toFixed(1)} s: ${ADVICE.stalledReader.cause}`
  );
}

/**
 * The sending end of a stalled reader: the peer's window is zero with data waiting to be sent,
 * and the kernel is probing it (backoff) or has sent nothing for a second.
 */
export function stalledSender(x: Sample): string | undefined {
  const t = x.s.tcpInfo;
  // established: a connection still in its handshake has no window yet and retries its SYN
  if (t?.sndWnd !== 0 || x.s.wqueue <= 0 || x.s.stateName !== 'established') return undefined;
  if (!(t.backoff > 0 || t.probes > 0 || t.lastDataSent >= STALLED_MS)) return undefined;
  return (
    `the peer's receive window is zero with ${size(x.s.wqueue)} waiting to be sent ` +
    `(zero-window probes, nothing sent for ${(t.lastDataSent / 1000).toFixed(1)} s): the peer's application stopped reading`
  );
}

/** TCP_INIT_CWND: autotuning sizes an established socket's send buffer for at least 2 × this many segments. */
export const INIT_CWND = 10;

/**
 * A pinned send buffer that was at its limit over the interval, told by what accumulates between two
 * samples (issue 44: a sender of 1 MiB bursts every 3 s through SO_SNDBUF 2 KiB across 40 ms read an
 * empty queue at ~85 % of 2 s samples, so its first finding came 46 s in). Evidence in words, or
 * undefined. All of:
 * - the buffer is locked, not merely small: below 2 × 10 segments, which autotuning gives every
 *   established socket (tcp_init_buffer_space: 2 × TCP_INIT_CWND × the skb's truesize, > mss; an
 *   autotuned socket across the lab read tb 46080 before its first byte), and below tcp_wmem max / 8;
 * - it was busy in the interval (tcpi_busy_time grew) and, on average over that busy time, at least
 *   half the buffer was in flight: acked bytes ÷ busy time × min rtt ≥ tb/2 — the rule's "queue at the
 *   limit" (Send-Q ≥ tb/2) averaged over the interval's busy time instead of read at one instant;
 * - congestion and the peer's window allow more than the buffer holds (cwnd × mss and snd_wnd > tb),
 *   and the peer's window limited less than half the busy time (tcpi_rwnd_limited).
 * A pinned sender that is idle, or sends less than half its buffer per round trip, is not found. The
 * kernel's tcpi_sndbuf_limited is no help here: it grew in 6 of 10 such bursts, and in neither of the
 * first two (it counts only while the whole queue has been sent and the writer waits).
 */
export function filledWhileBusy(x: Sample, tcpWmemMax: number): string | undefined {
  const t = x.s.tcpInfo;
  const o = x.old?.tcpInfo;
  const tb = x.s.skmem?.sndbuf;
  if (!t || !o || !x.seconds || tb === undefined) return undefined;
  if (tb >= 2 * INIT_CWND * t.sndMss || tb > tcpWmemMax * FAR_BELOW) return undefined;
  if (t.busyTime === undefined || o.busyTime === undefined) return undefined;
  if (t.bytesAcked === undefined || o.bytesAcked === undefined) return undefined;
  const busyUs = t.busyTime - o.busyTime;
  const acked = t.bytesAcked - o.bytesAcked;
  if (busyUs <= 0 || acked <= 0) return undefined;
  const rttUs = t.minRtt && t.minRtt !== 0xffffffff ? t.minRtt : t.rtt;
  const inFlight = (acked / busyUs) * rttUs;
  if (inFlight * 2 < tb) return undefined;
  if (t.sndCwnd * t.sndMss <= tb || (t.sndWnd !== undefined && t.sndWnd <= tb)) return undefined;
  const rwndUs = (t.rwndLimited ?? 0) - (o.rwndLimited ?? 0);
  if (rwndUs * 2 > busyUs) return undefined;
  return `≈ ${size(Math.round(inFlight))} in flight a round trip over ${ms(busyUs)} busy (${size(acked)} acknowledged)`;
}

/**
 * A pinned send buffer that holds less than the path needs, from the sender alone. The kernel's
 * sndbuf_limited counter misses it (measured: 0 % while the buffer was the only limit), so the rule
 * reads the state: a send buffer far below tcp_wmem max that autotuning did not grow, the queue at
 * that limit (Send-Q or w ≥ tb/2) or the buffer below two segments with rtt ≥ 10 × min rtt (the
 * delayed-ACK pattern), less in flight than cwnd and the peer's window allow, and the socket busy
 * most of the interval (or, without one, sending within the last second). A sender of bursts is
 * also found from what the interval accumulated (`filledWhileBusy`): its queue may read empty at
 * every sample between bursts.
 */
export function pinnedSender(x: Sample, tcpWmemMax: number): string | undefined {
  const { s } = x;
  const t = s.tcpInfo;
  const m = s.skmem;
  if (!t || !m || s.stateName !== 'established') return undefined;
  const tb = m.sndbuf;
  if (tb > tcpWmemMax * FAR_BELOW) return undefined;
  const minRtt = t.minRtt && t.minRtt !== 0xffffffff ? t.minRtt : undefined;
  const full = Math.max(s.wqueue, m.wmemQueued) * 2 >= tb;
  // below two segments (no autotuned socket is: autotuning starts at 2 x 10 segments) with the round
  // trip inflated by the peer's delayed ACK: the queue may read empty at the instant of the sample,
  // between an ACK and the next write (a real broker: 2 samples in 8)
  const belowSegments = tb < 2 * t.sndMss && minRtt !== undefined && t.rtt >= 10 * minRtt;
  const filled = filledWhileBusy(x, tcpWmemMax);
  if (!full && !belowSegments && !filled) return undefined;
  if (t.unacked >= t.sndCwnd) return undefined; // cwnd-limited: congestion, not the buffer
  if (t.sndWnd !== undefined && t.sndWnd <= s.wqueue) return undefined; // the peer's window
  const busy = busyShare(x);
  // busy most of the interval; or, for a sender of bursts (busy 0.45 s in every 3 s through a 4.5 KiB
  // pin across 40 ms: 22 % of a 2 s interval at most), busy at all with its queue at the limit now,
  // or at the limit on average over its busy time in the interval
  const loaded = busy !== undefined && (busy >= LOADED || ((full || !!filled) && busy > 0));
  if (busy !== undefined ? !loaded : t.lastDataSent >= STALLED_MS || !t.busyTime) return undefined;
  const rate = intervalRate(x, 'bytesAcked');
  if (rate === 0) return undefined;
  const rtt = `rtt ${ms(t.rtt)}${minRtt ? ` (min ${ms(minRtt)})` : ''}`;
  const moved =
    rate === undefined
      ? rtt
      : `${rateText(rate)} ≈ ${size(Math.round((rate * t.rtt) / 1e6))} per round trip, ${rtt}`;
  const segment = belowSegments
    ? `; below two segments (mss ${size(t.sndMss)}): ${ADVICE.pinnedSndbufSegment.cause}`
    : '';
  return (
    `send buffer ${size(tb)}, far below tcp_wmem max ${size(tcpWmemMax)}, ` +
    `${full ? `full (Send-Q ${size(s.wqueue)})` : filled ? `at the limit while busy, ${filled},` : 'busy'} ` +
    `with less in flight than cwnd and the peer's window allow: the buffer is the limit, ${moved}${segment}. ` +
    `${ADVICE.pinnedSndbuf.cause}`
  );
}

/**
 * A pinned receive buffer limiting its sender, from the receiver alone: the receive side is pinned
 * (see `pinned`), data keeps arriving, and the window is the limit: the queue holds half the buffer,
 * or, on a socket that receives at least as much as it sends, packets were dropped in the interval
 * or a window's worth arrives per round trip (rate × RTT ≥ a quarter of the window).
 */
export function windowLimitedReceiver(x: Sample, dropsInInterval: number): string | undefined {
  const { s, old } = x;
  const t = s.tcpInfo;
  const m = s.skmem;
  if (!t || !m || t.lastDataRecv >= STALLED_MS) return undefined;
  const rate = intervalRate(x, 'bytesReceived');
  if (old && !rate) return undefined;
  const window = t.rcvWnd || m.rcvbuf / 2;
  const rttUs = Math.max(t.rcvRtt ?? 0, t.rtt);
  // drops and rate × RTT count only where receiving is the socket's main work (in the interval, or
  // over its life before there is one): on a socket that mostly sends (a broker to its consumer, acks
  // in), one dropped packet is not a full buffer, and its own send queue and the peer's think time
  // inflate both RTT estimates (the lab's drain flagged the broker's socket to the consumer so)
  const sent = intervalRate(x, 'bytesAcked');
  const mostlyReceives =
    rate !== undefined && sent !== undefined ? rate >= sent : (t.bytesReceived ?? 0) >= (t.bytesAcked ?? 0);
  const evidence: string[] = [];
  if (m.rmemAlloc * 2 >= m.rcvbuf) evidence.push(`${size(m.rmemAlloc)} of it queued`);
  if (mostlyReceives && dropsInInterval > 0) evidence.push(`${dropsInInterval} packets dropped on it`);
  if (mostlyReceives && rate !== undefined && (rate * rttUs) / 1e6 >= window / 4)
    evidence.push(`${rateText(rate)} arrive, ≈ the window (${size(window)}) per ${ms(rttUs)} round trip`);
  if (!evidence.length) return undefined;
  return `it is receiving: ${evidence.join(', ')}`;
}
