// What one probe of the exporter's /probe measured, and the request for it: the types the module
// runners (probe-iperf3.ts, probe-serve.ts) and probe.ts share, and the sending side's figures taken
// from a blast result. Pure.
import type { Iperf3BlastResult, StreamSummary, TcpBlastResult } from '../ends/end-events.js';
import type { BufferSize } from '../policy/buffers.js';
import { DEFAULT_SERVE_PORT } from './protocol.js';

export const PROBE_MODULES = ['iperf3', 'sockbuf'] as const;
export type ProbeModule = (typeof PROBE_MODULES)[number];
/** The port a target without one is probed on: iperf3 -s's and sockbuf serve's. */
export const PROBE_PORTS: Record<ProbeModule, number> = { iperf3: 5201, sockbuf: DEFAULT_SERVE_PORT };

/** Bytes per write, as `blast tcp` and `blast tcp --iperf3` send by default. */
export const WRITE_SIZE = 128 * 1024;

export interface ProbeRun {
  module: ProbeModule;
  /** The address that was checked against the allow-list: connected to as is, never resolved again. */
  address: string;
  port: number;
  /** Seconds of sending. */
  seconds: number;
  /** Seconds the whole probe may take (connect, test, results); it is cut there. */
  capSeconds: number;
  /** The send buffer: 'auto' (default) leaves autotuning on; a size pins it. */
  sndbuf?: BufferSize;
  /** sockbuf serve's --token, when it asks for one. */
  token?: string;
  /** Aborting ends the probe at once (the HTTP client went away). */
  signal?: AbortSignal;
}

export interface ProbeResult {
  success: boolean;
  durationSeconds: number;
  /** Why it failed, said once (printable: no control characters from the peer). */
  error?: string;
  sentBytes?: number;
  bytesPerSecond?: number;
  /** What the far end counted: iperf3's server, or serve's sink. */
  receivedBytes?: number;
  retransmits?: number;
  rttSeconds?: number;
  minRttSeconds?: number;
  rwndLimitedRatio?: number;
  sndbufLimitedRatio?: number;
  /** The peer's advertised receive window at the end (tcpi_snd_wnd). */
  peerWindowBytes?: number;
  sendBufferBytes?: number;
  sendBufferPinned?: boolean;
  /** The far end's receive buffer (serve's sink reports it; iperf3 does not). */
  receiveBufferBytes?: number;
  receiveBufferPinned?: boolean;
}

export type Figures = Omit<ProbeResult, 'success' | 'durationSeconds' | 'error'>;
export type Row = Record<string, unknown>;
export const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const per = (v: unknown, d: number) => (num(v) === undefined ? undefined : (v as number) / d);

/** The sending side's figures from a runTcpBlast / runIperf3Blast result (one stream). Pure. */
export function senderFigures(r: TcpBlastResult | Iperf3BlastResult): Figures {
  const s: Partial<StreamSummary> = r.perStream[0] ?? {};
  const pinned = s.buffers?.sndbuf.autotuning;
  return {
    sentBytes: r.bytes,
    bytesPerSecond: num(r.bytesPerSecond),
    retransmits: num(s.totalRetrans),
    rttSeconds: per(s.rttUs, 1e6),
    minRttSeconds: per(s.minRttUs, 1e6),
    rwndLimitedRatio: per(r.rwndLimitedPct, 100),
    sndbufLimitedRatio: per(r.sndbufLimitedPct, 100),
    peerWindowBytes: num(s.sndWndBytes),
    sendBufferBytes: num(s.sndbufBytes),
    sendBufferPinned: pinned === undefined ? undefined : !pinned,
  };
}
