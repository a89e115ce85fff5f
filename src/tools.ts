/**
 * `sockbuf/tools`: the instruments. Everything the CLI does, a program can: bench and the quick suite,
 * the seeds and their report, the lab, serve and the remote ends, the sink and blast ends (sockbuf's
 * own and iperf3's), inspect, doctor and the exporter, each with typed results; and the helpers they
 * share: the unit parsers and formatters, the raw tcp_info/SO_MEMINFO readers, the frame header, the
 * adaptive sizer. What an application builds on is `sockbuf`.
 *
 * @packageDocumentation
 */

export { type BenchOptions, type BenchOutcome, runBench } from './bench/bench.js';
export { renderTable } from './bench/output.js';
export { renderHtml } from './bench/pages.js';
export {
  checkResults,
  loadResults,
  type ResultRow,
  type ResultsDocument,
  type SeedVerdict,
} from './bench/report/results.js';
export { mergeResults } from './bench/report/sources.js';
export { type PointResult, type Progress, RunFailure } from './bench/runner.js';
export type {
  Cell,
  Column,
  EndCommand,
  EndOutput,
  Ends,
  Point,
  Row,
  RunOutput,
  Scenario,
} from './bench/scenario.js';
export { SEEDS, type Seed } from './bench/seeds/index.js';
export { runSuite, SUITE, type SuiteEntry, type SuiteOptions } from './bench/suite.js';
export { type DiagnoseOptions, type Diagnosis, type DoctorDocument, diagnose } from './doctor/diagnose.js';
export type { DoctorTargets, Finding, FindingStatus } from './doctor/rules.js';
export type {
  BlastIntervalEvent,
  BlastTotals,
  ConnectionEvent,
  ConnectionIntervalEvent,
  Emit,
  EndEvent,
  EndEventFields,
  IdleIntervalEvent,
  IntervalStream,
  Iperf3BlastResult,
  Iperf3SinkResult,
  Iperf3TestEvent,
  LimitedShare,
  PinnedCeilings,
  RefusedEvent,
  StoppedEvent,
  StreamSummary,
  TcpBlastResult,
  TcpBlastStream,
  TcpSinkResult,
} from './ends/end-events.js';
export type { FarEndLimits } from './ends/far-end-limits.js';
export { type Iperf3BlastOptions, runIperf3Blast } from './ends/iperf3/iperf3-blast.js';
export { Iperf3Sink, type Iperf3SinkOptions } from './ends/iperf3/iperf3-sink.js';
export { startTcpSink, TcpSink, type TcpSinkOptions } from './ends/tcp-sink.js';
export { runTcpBlast, type TcpBlastOptions } from './ends/tcp-source.js';
export { createUdpBlast, UdpBlast, type UdpBlastOptions, type UdpBlastResult } from './ends/udp-blast.js';
export { runUdpSink, type UdpSinkOptions, type UdpSinkResult } from './ends/udp-sink.js';
export { PeerError, type SockbufErrorCode } from './errors.js';
export { downLabs, execInLab, holdLab, type LabUp, runUnderLab, upLab } from './lab/hold.js';
export { Lab, type LabOptions, withLab } from './lab/lab.js';
export { type HostName, type LabInfo, type LabListing, listLabs } from './lab/registry.js';
export type { AlertRule, RuleGroup } from './observe/alert-rule.js';
export { alertRules, rulesYaml } from './observe/alerts.js';
export type { Flag, FlagKind, HostLimits, InspectedSocket } from './observe/analyze.js';
export { type Exporter, type ExporterOptions, startExporter } from './observe/exporter-server.js';
export { type InspectOptions, type InspectSample, inspectSockets, watchSockets } from './observe/inspect.js';
export type { SocketRole } from './observe/programs.js';
export { markPinned } from './policy/apply.js';
export { pinnedWindow } from './policy/bdp.js';
export {
  formatBitRate,
  formatDuration,
  formatSize,
  parseBitRate,
  parseDuration,
  parsePacketRate,
  parseSize,
} from './policy/units.js';
export { type RemoteEndOptions, runRemoteEnd } from './serve/remote-end.js';
export { type ServeHandle, type ServeOptions, startServer } from './serve/server.js';
export { getMemInfo, type MemInfo } from './sys/meminfo.js';
export { decodeTcpInfo, getTcpInfo, type TcpInfo } from './sys/tcpinfo.js';
export { frameHeader } from './tcp/frame.js';
export { AdaptiveSizer } from './tcp/sizer.js';
export type { OffloadOption } from './udp/offload.js';
export { MAX_DATAGRAM } from './udp/sender.js';
