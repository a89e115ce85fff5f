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
export { LinuxOnlyError, SysError } from './sys/errors.js';
