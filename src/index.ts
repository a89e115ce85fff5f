// `sockbuf`: what an application builds on. TCP connect/listen with the adaptive reader and frames,
// the batched UDP receiver and sender, the buffer policy, socket statistics, metrics and the errors.
// The instruments (bench, suite, lab, serve, the ends, inspect, doctor, exporter) are `sockbuf/tools`.

export { EnvironmentError, LinuxOnlyError, ResolveError, SysError, UsageError } from './errors.js';
export { type MetricsRegistry, registerMetrics } from './observe/metrics.js';
export { type SocketStats, type StatsInterval, StatsSampler, socketStats } from './observe/stats.js';
export {
  applyTcpBuffers,
  applyUdpRcvbuf,
  type ConnectPinnedOptions,
  connectPinned,
  type ListenPinnedOptions,
  listenPinned,
  markPinned,
} from './policy/apply.js';
export { ceiling, pinnedWindow, windowFor } from './policy/bdp.js';
export type { BufferSize, TcpBufferOptions, TcpBufferReport, UdpRcvbufReport } from './policy/buffers.js';
export {
  formatBitRate,
  formatDuration,
  formatSize,
  parseBitRate,
  parseDuration,
  parsePacketRate,
  parseSize,
} from './policy/units.js';
export { getMemInfo, type MemInfo } from './sys/meminfo.js';
export { decodeTcpInfo, getTcpInfo, type TcpInfo } from './sys/tcpinfo.js';
export {
  type ConnectOptions,
  connect,
  type ListenOptions,
  listen,
  TcpConnection,
  TcpServer,
  type TcpStats,
} from './tcp/connection.js';
export { encodeFrame, FrameDecoder, FrameError, type FrameHandler, frameHeader } from './tcp/frame.js';
export type { Consumer, ReaderOption, ReaderStats } from './tcp/reader.js';
export { AdaptiveSizer } from './tcp/sizer.js';
export type { OffloadOption } from './udp/offload.js';
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
  MAX_DATAGRAM,
  UdpSendError,
  UdpSender,
  type UdpSenderOptions,
  type UdpSenderStats,
  type UdpTarget,
} from './udp/sender.js';
