// What the TCP ends (sink, blast, and their iperf3 forms) report, as types: the events they emit while
// they run (a discriminated union on `event`) and the result each resolves with. Field names are
// sockbuf's JSON (docs/results-schema.json): the CLI prints these objects as they are.
import type { TcpBufferReport } from '../policy/buffers.js';
import type { TcpStats } from '../tcp/connection.js';

/** The shares of the sending time a stream was limited by the peer's window or its own send buffer, in %. */
export interface LimitedShare {
  rwndLimitedPct?: number;
  sndbufLimitedPct?: number;
}

/** What a pinned buffer allows one stream at the RTT measured (ceiling ≈ window / RTT), for each buffer pinned. */
export interface PinnedCeilings {
  sndbufCeilingBitsPerSecond?: number;
  rcvbufCeilingBitsPerSecond?: number;
}

/** One stream at its end: tcp_info (the last sample), the reader, the buffers as set and as now, the ceilings. */
export type StreamSummary = TcpStats & PinnedCeilings & { buffers: TcpBufferReport };

/** One stream's part of a sending end's interval. */
export type IntervalStream = TcpStats & {
  stream: number;
  /** The iperf3 stream id (iperf3 ends only). */
  id?: number;
  bytes: number;
  bytesPerSecond: number;
};

/** A sending end's interval (blast, blast --iperf3): every stream's bytes since the previous one. */
export interface BlastIntervalEvent extends LimitedShare {
  event: 'interval';
  seconds: number;
  intervalSeconds: number;
  bytes: number;
  bytesPerSecond: number;
  streams: IntervalStream[];
}

/** A receiving end's interval for one connection that moved since the previous one. */
export type ConnectionIntervalEvent = TcpStats & {
  event: 'interval';
  conn: number;
  stream?: number;
  seconds: number;
  intervalSeconds: number;
  bytes: number;
  bytesPerSecond: number;
  reads: number;
  meanReadBytes: number;
  readerSizeBytes: number;
  mismatches?: number;
};

/** A receiving end's interval for the connections that did not move. */
export interface IdleIntervalEvent {
  event: 'interval';
  idleConnections: number;
  intervalSeconds: number;
}

/** A connection that ended, at a receiving end: what it read and sent, what was checked, its socket. */
export type ConnectionEvent = TcpStats &
  Partial<PinnedCeilings> & {
    event: 'connection';
    conn: number;
    test?: string;
    stream?: number;
    reverse: boolean;
    /** Not a sockbuf connection: bytes counted, nothing decoded. */
    plain?: boolean;
    unverified?: string;
    bytes: number;
    sentBytes: number;
    seconds: number;
    bytesPerSecond: number;
    reads: number;
    meanReadBytes: number;
    frames?: number;
    mismatches?: number;
    error?: string;
    /** Closed by stop(now): the reason (`SIGINT` …). */
    interrupted?: string;
    buffers?: TcpBufferReport;
  };

/** A connection a far end closed at once (no hello, a wrong secret, a test it does not take). */
export interface RefusedEvent {
  event: 'refused';
  conn: number;
  reason: string;
}

/** A far end reached a cap and closed every connection. */
export interface StoppedEvent {
  event: 'stopped';
  reason: string;
}

/** An iperf3 test that ended at the iperf3 sink: its figures, the client's, or what went wrong. */
export interface Iperf3TestEvent extends LimitedShare {
  event: 'test';
  iperf3: true;
  streams: number;
  error?: string;
  /** Cut by the sink's stop (a signal): the figures are what it moved until then. */
  interrupted?: true;
  reverse?: boolean;
  seconds?: number;
  bytes?: number;
  sentBytes?: number;
  bytesPerSecond?: number;
  /** The window iperf3 -w asked for, or 'auto'. */
  window?: number | 'auto';
  pinned?: boolean;
  congestion?: string;
  clientVersion?: string;
  client?: { bytes: number; retransmits: number; cpuUtilTotal: number };
}

/** Every event a TCP end emits while it runs, told apart by `event`. */
export type EndEvent =
  | BlastIntervalEvent
  | ConnectionIntervalEvent
  | IdleIntervalEvent
  | ConnectionEvent
  | RefusedEvent
  | StoppedEvent
  | Iperf3TestEvent;

/** An event's fields without its name: what an end passes to {@link Emit} beside the name. */
export type EndEventFields<E extends EndEvent> = E extends unknown ? Omit<E, 'event'> : never;

/** How an end reports an event: its name and the fields of that event. */
export type Emit = <K extends EndEvent['event']>(
  event: K,
  fields: EndEventFields<Extract<EndEvent, { event: K }>>,
) => void;

/** One stream's figures at the end of a blast. */
export type TcpBlastStream = StreamSummary & {
  stream: number;
  bytes: number;
  frames?: number;
  mismatches?: number;
  error?: string;
};

/** What every TCP blast reports, sockbuf's own and iperf3's: the run's shape and its totals. */
export interface BlastTotals extends LimitedShare {
  /** The far end sent and this end read (-R), rather than the other way. */
  reverse: boolean;
  streams: number;
  /** Bytes per write (a message; iperf3's -l). */
  size: number;
  bytes: number;
  seconds: number;
  bytesPerSecond: number;
}

/** What runTcpBlast resolves with (`sockbuf blast tcp`'s result line). */
export interface TcpBlastResult extends BlastTotals {
  /** Zeros with no hello were sent (raw). */
  raw?: true;
  /** Reverse only: the frames checked, the mismatches and the streams with an error. */
  frames?: number;
  mismatches?: number;
  errors?: number;
  /** CPU time of this process over the run (absent when no stream opened). */
  cpuSeconds?: number;
  /** Why the run was cut short by a stop (`SIGINT` …), when it was. */
  interrupted?: string;
  /**
   * Why the run was ended at its deadline or after stallSeconds without progress (a receiver that never
   * accepted, read or closed), when it was.
   */
  stalled?: string;
  /**
   * Why the sink ended the run (a reset, a close, a refusal), said with its address, what was moved
   * until then and the likely cause, when it did; the totals are what was moved until then.
   */
  failed?: string;
  perStream: TcpBlastStream[];
}

/** What a TCP sink's stop() and done resolve with (`sockbuf sink tcp`'s result line). */
export interface TcpSinkResult {
  /** The reader, as `--reader` takes it. */
  reader: string;
  connections: number;
  bytes: number;
  sentBytes: number;
  seconds: number;
  bytesPerSecond: number;
  cpuSeconds: number;
  frames?: number;
  mismatches?: number;
  unverified?: number;
  errors: number;
  refused?: number;
  /** Why a far end stopped (a cap), when it did. */
  stopped?: string;
  /** Why stop() closed the connections at once (`SIGINT` …), and how many it cut. */
  interrupted?: string;
  interruptedConnections?: number;
}

/** What runIperf3Blast resolves with: this end's figures and what the iperf3 server reported. */
export interface Iperf3BlastResult extends BlastTotals {
  iperf3: true;
  congestion?: string;
  sndbuf: number | 'auto';
  perStream: (StreamSummary & { stream: number; id: number; bytes: number })[];
  server: {
    host: string;
    bytes: number;
    seconds: number;
    bytesPerSecond: number;
    retransmits: number;
    cpuUtilTotal: number;
    congestion?: string;
    window?: number;
    streams: { id: number; bytes: number; retransmits: number }[];
  };
}

/** What an iperf3 sink's stop() and done resolve with: the tests it served. */
export interface Iperf3SinkResult {
  iperf3: true;
  /** The reader, as `--reader` takes it. */
  reader: string;
  tests: number;
  connections: number;
  bytes: number;
  sentBytes: number;
  seconds: number;
  bytesPerSecond: number;
  errors: number;
  refused: number;
  /** Tests cut by stop(true) (a signal), counted in tests with what they moved; not errors. */
  interrupted: number;
}
