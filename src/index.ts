// The public API of sockbuf, and nothing else.

export { type HostPort, parseListen, parseTo } from './policy/address.js';
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
export { ServeClient, ServeRefused } from './serve/client.js';
export { ProtocolError } from './serve/protocol.js';
export { type ServeHandle, type ServeOptions, startServer } from './serve/server.js';
export { LinuxOnlyError, SysError } from './sys/errors.js';
