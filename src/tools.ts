// `sockbuf/tools`: the instruments. Everything the CLI does, a program can: bench and the quick suite,
// the seeds and their report, the lab, serve and the remote ends, the sink and blast ends (sockbuf's
// own and iperf3's), inspect, doctor and the exporter. What an application builds on is `sockbuf`.

export { type BenchOptions, type BenchOutcome, runBench } from './bench/bench.js';
export { renderTable } from './bench/output.js';
export { renderHtml } from './bench/pages.js';
export {
  checkResults,
  loadResults,
  mergeResults,
  type ResultRow,
  type ResultsDocument,
  type Verdict as SeedVerdict,
} from './bench/report/results.js';
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
export { loadScenario, loadScenarios } from './bench/scenario-registry.js';
export { SEEDS, type Seed } from './bench/seeds/index.js';
export { runSuite, SUITE, type SuiteEntry, type SuiteOptions } from './bench/suite.js';
export { type DiagnoseOptions, type Diagnosis, diagnose } from './doctor/diagnose.js';
export type { Finding, Status as FindingStatus, Targets as DoctorTargets } from './doctor/rules.js';
export type { FarEndLimits } from './ends/far-end-limits.js';
export { type Iperf3BlastOptions, runIperf3Blast } from './ends/iperf3/client.js';
export { Iperf3Sink, type Iperf3SinkOptions } from './ends/iperf3/server.js';
export { Sink as TcpSink, type SinkOptions as TcpSinkOptions, startTcpSink } from './ends/tcp-sink.js';
export {
  type BlastOptions as TcpBlastOptions,
  type Emit as EndEmit,
  runBlast as runTcpBlast,
} from './ends/tcp-source.js';
export { createUdpBlast, UdpBlast, type UdpBlastOptions, type UdpBlastResult } from './ends/udp-blast.js';
export { runUdpSink, type UdpSinkOptions, type UdpSinkResult } from './ends/udp-sink.js';
export { type SequenceReport, SequenceTracker } from './ends/udp-tracker.js';
export { downLabs, execInLab, holdLab, type LabUp, runUnderLab, upLab } from './lab/hold.js';
export { Lab, type LabOptions, withLab } from './lab/lab.js';
export { type HostName, type LabInfo, type LabListing, listLabs } from './lab/registry.js';
export { type AlertRule, alertRules, type RuleGroup, rulesYaml } from './observe/alerts.js';
export type { Flag, FlagKind, HostLimits, InspectedSocket } from './observe/analyze.js';
export { type Exporter, type ExporterOptions, startExporter } from './observe/exporter-server.js';
export { type InspectOptions, type InspectSample, inspectSockets, watchSockets } from './observe/inspect.js';
export { ServeClient, ServeRefused } from './serve/client.js';
export { runProbe } from './serve/probe.js';
export type { ProbeResult, ProbeRun } from './serve/probe-figures.js';
export { type ProbeOptions, probeHandler } from './serve/probe-http.js';
export { ProtocolError } from './serve/protocol.js';
export { type RemoteEndOptions, runRemoteEnd } from './serve/remote-end.js';
export { type ServeHandle, type ServeOptions, startServer } from './serve/server.js';
export { createDgramReceiver, type DgramReceiver, type DgramReceiverOptions } from './udp/dgram-receiver.js';
