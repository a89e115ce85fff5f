// socketStats: one TCP socket's tcp_info and buffers, as ss -tmi shows them, with units in the names.
// StatsSampler: the same over an interval (rwnd-limited % during the last second, not since the start).
// The arithmetic (socketStatsFrom, statsDelta) is pure; only socketStats and the sampler read the kernel.
import net from 'node:net';
import { UsageError } from '../errors.js';
import { pinnedBuffers } from '../policy/apply.js';
import { checkWholeNumber } from '../policy/shape.js';
import { shown } from '../policy/shown.js';
import { SO_RCVBUF, SO_SNDBUF, SOL_SOCKET } from '../sys/constants.js';
import { fdOf, getIntOption } from '../sys/socket.js';
import { getTcpInfo, type TcpInfo } from '../sys/tcpinfo.js';

/** A socket's statistics: tcp_info with the units in the names, and the buffers as the kernel reports them. */
export interface SocketStats {
  /** 'established', 'listen' … as ss names them. */
  state: string;
  rttUs: number;
  rttVarUs: number;
  /** Undefined until measured (the kernel reports ~0), or on kernels before 4.6. */
  minRttUs?: number;
  cwndSegments: number;
  /** cwnd × snd_mss, as iperf3 reports snd_cwnd. */
  cwndBytes: number;
  sndMssBytes: number;
  /** Window scale the peer advertised (applies to our sending); undefined without window scaling. */
  sndWscale?: number;
  /** Window scale we advertised (applies to what we receive). */
  rcvWscale?: number;
  /** The peer's receive window after scaling (kernel ≥ 5.4). */
  sndWndBytes?: number;
  /** Our advertised receive window after scaling (kernel ≥ 6.2). */
  rcvWndBytes?: number;
  /** The kernel's delivery-rate estimate (ss prints it × 8 as bps). */
  deliveryRateBytesPerSecond?: number;
  deliveryRateAppLimited?: boolean;
  totalRetrans: number;
  /** Bytes the peer acknowledged (the SYN and FIN count one each). */
  bytesAcked?: number;
  /** Bytes received in sequence (the peer's FIN counts one). */
  bytesReceived?: number;
  bytesSent?: number;
  bytesRetrans?: number;
  /** Written by the application, not yet sent. */
  notsentBytes?: number;
  /** Time with data in flight, sender side only (kernel ≥ 4.10; jiffies granularity). */
  busyUs?: number;
  rwndLimitedUs?: number;
  sndbufLimitedUs?: number;
  /** 100 × rwnd_limited / busy_time, as ss computes it; undefined when never busy. */
  rwndLimitedPct?: number;
  sndbufLimitedPct?: number;
  /** SO_RCVBUF / SO_SNDBUF as getsockopt reports them now (doubled when pinned; grows when autotuned). */
  rcvbufBytes: number;
  sndbufBytes: number;
  /** Whether sockbuf pinned each buffer; undefined when not known (an fd, or a socket not made by sockbuf). */
  pinned?: { rcvbuf: boolean; sndbuf: boolean };
}

const pct = (part: number | undefined, busy: number | undefined) =>
  busy && part !== undefined ? (100 * part) / busy : undefined;

/** SocketStats from a decoded tcp_info and the buffer sizes. Pure. */
export function socketStatsFrom(
  t: TcpInfo,
  rcvbufBytes: number,
  sndbufBytes: number,
  pinned?: { rcvbuf: boolean; sndbuf: boolean },
): SocketStats {
  return {
    state: t.stateName,
    rttUs: t.rtt,
    rttVarUs: t.rttvar,
    minRttUs: t.minRtt === undefined || t.minRtt === 0 || t.minRtt === 0xffffffff ? undefined : t.minRtt,
    cwndSegments: t.sndCwnd,
    cwndBytes: t.sndCwnd * t.sndMss,
    sndMssBytes: t.sndMss,
    sndWscale: t.sndWscale,
    rcvWscale: t.rcvWscale,
    sndWndBytes: t.sndWnd,
    rcvWndBytes: t.rcvWnd,
    deliveryRateBytesPerSecond: t.deliveryRate,
    deliveryRateAppLimited: t.deliveryRate === undefined ? undefined : t.deliveryRateAppLimited,
    totalRetrans: t.totalRetrans,
    bytesAcked: t.bytesAcked,
    bytesReceived: t.bytesReceived,
    bytesSent: t.bytesSent,
    bytesRetrans: t.bytesRetrans,
    notsentBytes: t.notsentBytes,
    busyUs: t.busyTime,
    rwndLimitedUs: t.rwndLimited,
    sndbufLimitedUs: t.sndbufLimited,
    rwndLimitedPct: pct(t.rwndLimited, t.busyTime),
    sndbufLimitedPct: pct(t.sndbufLimited, t.busyTime),
    rcvbufBytes,
    sndbufBytes,
    pinned,
  };
}

/** A connected TCP socket's statistics now. Takes a net.Socket or a raw fd. */
export function socketStats(target: net.Socket | number): SocketStats {
  if (typeof target === 'number') checkWholeNumber(target, 'target');
  else if (!(target instanceof net.Socket))
    throw UsageError.invalid('target', shown(target), 'a net.Socket or a descriptor');
  const fd = typeof target === 'number' ? target : fdOf(target);
  const report = typeof target === 'number' ? undefined : pinnedBuffers(target);
  const pinned = report && {
    rcvbuf: report.rcvbuf.autotuning === false,
    sndbuf: report.sndbuf.autotuning === false,
  };
  return socketStatsFrom(
    getTcpInfo(fd),
    getIntOption(fd, SOL_SOCKET, SO_RCVBUF),
    getIntOption(fd, SOL_SOCKET, SO_SNDBUF),
    pinned,
  );
}

/** What changed between two samples. */
export interface StatsInterval {
  seconds: number;
  /** The later sample, as is. */
  now: SocketStats;
  bytesAcked?: number;
  bytesReceived?: number;
  retrans: number;
  /** bytesAcked × 8 / seconds. */
  ackedBitsPerSecond?: number;
  busyUs?: number;
  rwndLimitedUs?: number;
  sndbufLimitedUs?: number;
  /** During this interval only: 100 × Δrwnd_limited / Δbusy_time. */
  rwndLimitedPct?: number;
  sndbufLimitedPct?: number;
}

const diff = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : b - a;

/** The interval between two samples taken `seconds` apart. Pure. */
export function statsDelta(prev: SocketStats, now: SocketStats, seconds: number): StatsInterval {
  const bytesAcked = diff(prev.bytesAcked, now.bytesAcked);
  const busyUs = diff(prev.busyUs, now.busyUs);
  const rwndLimitedUs = diff(prev.rwndLimitedUs, now.rwndLimitedUs);
  const sndbufLimitedUs = diff(prev.sndbufLimitedUs, now.sndbufLimitedUs);
  return {
    seconds,
    now,
    bytesAcked,
    bytesReceived: diff(prev.bytesReceived, now.bytesReceived),
    retrans: now.totalRetrans - prev.totalRetrans,
    ackedBitsPerSecond: bytesAcked === undefined || !(seconds > 0) ? undefined : (bytesAcked * 8) / seconds,
    busyUs,
    rwndLimitedUs,
    sndbufLimitedUs,
    rwndLimitedPct: pct(rwndLimitedUs, busyUs),
    sndbufLimitedPct: pct(sndbufLimitedUs, busyUs),
  };
}

/**
 * Deltas over intervals: each sample() returns what happened since the previous one (the first,
 * since the sampler was made). Call it from a timer, e.g. every second.
 */
export class StatsSampler {
  private prev: SocketStats;
  private at: bigint;
  /** Samples `target` (a net.Socket or a descriptor) at once: the first sample() counts from here. */
  constructor(private readonly target: net.Socket | number) {
    this.prev = socketStats(target);
    this.at = process.hrtime.bigint();
  }

  /** What changed since the previous sample (the first: since the sampler was made). */
  sample(): StatsInterval {
    const now = socketStats(this.target);
    const at = process.hrtime.bigint();
    const d = statsDelta(this.prev, now, Number(at - this.at) / 1e9);
    this.prev = now;
    this.at = at;
    return d;
  }
}
