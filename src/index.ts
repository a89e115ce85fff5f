/**
 * `sockbuf`: what an application builds on. TCP connect/listen with the adaptive reader and frames,
 * the batched UDP receiver and sender, the buffer policy, socket statistics, metrics and the errors.
 * The instruments (bench, suite, lab, serve, the ends, inspect, doctor, exporter) are `sockbuf/tools`.
 *
 * @packageDocumentation
 */

export {
  EnvironmentError,
  LinuxOnlyError,
  ResolveError,
  SockbufError,
  SysError,
  UsageError,
} from './errors.js';
export { type MetricsRegistry, registerMetrics } from './observe/metrics.js';
export { type SocketStats, type StatsInterval, StatsSampler, socketStats } from './observe/socket-stats.js';
export {
  applyTcpBuffers,
  applyUdpRcvbuf,
  type ConnectPinnedOptions,
  connectPinned,
  type ListenPinnedOptions,
  listenPinned,
} from './policy/apply.js';
export { ceiling, windowFor } from './policy/bdp.js';
export type { BufferSize, TcpBufferOptions, TcpBufferReport, UdpRcvbufReport } from './policy/buffers.js';
export {
  type ConnectOptions,
  connect,
  type ListenOptions,
  listen,
  TcpConnection,
  TcpServer,
  type TcpStats,
} from './tcp/connection.js';
export { encodeFrame, FrameDecoder, FrameError, type FrameHandler } from './tcp/frame.js';
export type { Consumer, ReaderOption, ReaderStats } from './tcp/reader.js';
export {
  createUdpReceiver,
  type UdpBatch,
  UdpReceiver,
  type UdpReceiverOptions,
  type UdpReceiverStats,
} from './udp/receiver.js';
export {
  createUdpSender,
  type GsoRefusal,
  UdpSendError,
  UdpSender,
  type UdpSenderOptions,
  type UdpSenderStats,
  type UdpTarget,
} from './udp/sender.js';
