// The public API of sockbuf, and nothing else.

export { type HostPort, parseListen, parseTo } from './policy/address.js';
export {
  applyTcpBuffers,
  applyUdpRcvbuf,
  type ConnectPinnedOptions,
  connectPinned,
  type ListenPinnedOptions,
  listenPinned,
} from './policy/apply.js';
export { ceiling, pinnedWindow, windowFor } from './policy/bdp.js';
export {
  type AutoBuffer,
  type BufferSize,
  type PinnedBuffer,
  type TcpBufferOptions,
  type TcpBufferReport,
  UDP_RCVBUF_TARGET,
  type UdpRcvbufReport,
} from './policy/buffers.js';
export {
  formatBitRate,
  formatDuration,
  formatSize,
  parseBitRate,
  parseDuration,
  parsePacketRate,
  parsePercent,
  parseSize,
  UsageError,
} from './policy/units.js';
export { LinuxOnlyError, SysError } from './sys/errors.js';
