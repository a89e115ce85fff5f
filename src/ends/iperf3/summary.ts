// What sockbuf's end of an iperf3 test reports beside iperf3's figures: the limited shares over all
// streams (pure), and one stream's tcp_info, buffers and reader at the end.
import { ceiling, pinnedWindow } from '../../policy/bdp.js';
import type { TcpBufferReport } from '../../policy/buffers.js';
import type { TcpConnection, TcpStats } from '../../tcp/connection.js';

interface Limited {
  rwndLimitedPct?: number;
  sndbufLimitedPct?: number;
  busyUs?: number;
  rwndLimitedUs?: number;
  sndbufLimitedUs?: number;
}

/**
 * rwnd-limited and sndbuf-limited % over several streams: weighted by busy time when every stream
 * has its chrono counters (the whole test), else the mean of the streams' own % (an interval).
 * Empty when no stream was ever busy sending (a receiving end). Pure.
 */
export function limitedShare(streams: Limited[]): { rwndLimitedPct?: number; sndbufLimitedPct?: number } {
  if (streams.length === 0) return {};
  const busy = streams.reduce((a, s) => a + (s.busyUs ?? Number.NaN), 0);
  if (busy > 0) {
    const sum = (k: 'rwndLimitedUs' | 'sndbufLimitedUs') => streams.reduce((a, s) => a + (s[k] ?? 0), 0);
    return {
      rwndLimitedPct: (100 * sum('rwndLimitedUs')) / busy,
      sndbufLimitedPct: (100 * sum('sndbufLimitedUs')) / busy,
    };
  }
  const mean = (k: 'rwndLimitedPct' | 'sndbufLimitedPct') => {
    const v = streams.map((s) => s[k]).filter((x): x is number => x !== undefined);
    return v.length ? v.reduce((a, x) => a + x, 0) / v.length : undefined;
  };
  const r = mean('rwndLimitedPct');
  const s = mean('sndbufLimitedPct');
  return {
    ...(r === undefined ? {} : { rwndLimitedPct: r }),
    ...(s === undefined ? {} : { sndbufLimitedPct: s }),
  };
}

/**
 * What a pinned buffer allows one stream at this RTT (ceiling ≈ window / RTT, the window about the size
 * asked of setsockopt): `sndbufCeilingBitsPerSecond` and `rcvbufCeilingBitsPerSecond`, for each
 * buffer that was pinned. Pure.
 */
export function pinnedCeilings(
  buffers: TcpBufferReport,
  rttUs: number | undefined,
): { sndbufCeilingBitsPerSecond?: number; rcvbufCeilingBitsPerSecond?: number } {
  if (!rttUs) return {};
  const c = (b: TcpBufferReport['sndbuf']) =>
    b.autotuning ? undefined : ceiling(pinnedWindow(b.effective), rttUs / 1e6);
  const snd = c(buffers.sndbuf);
  const rcv = c(buffers.rcvbuf);
  return {
    ...(snd === undefined ? {} : { sndbufCeilingBitsPerSecond: snd }),
    ...(rcv === undefined ? {} : { rcvbufCeilingBitsPerSecond: rcv }),
  };
}

/** One data connection at the end: tcp_info (the last sample), buffers as set and as now, what a pinned one allows, reader. */
export function streamSummary(
  conn: TcpConnection,
  buffers: TcpBufferReport = conn.buffers,
): TcpStats & { buffers: TcpBufferReport } {
  const st = conn.stats();
  return { ...st, buffers, ...pinnedCeilings(buffers, st.minRttUs ?? st.rttUs) };
}
