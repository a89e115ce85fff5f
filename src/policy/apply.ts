// Buffer policy, the part that touches sockets: apply the options to a socket made through src/sys,
// read back, report, warn once. connectPinned/listenPinned are the way to get a net.Socket /
// net.Server whose buffers were set before the SYN (window scaling is fixed there).
import net from 'node:net';
import { SysError, UsageError } from '../errors.js';
import {
  IPPROTO_TCP,
  SO_RCVBUF,
  SO_RCVBUFFORCE,
  SO_REUSEADDR,
  SO_SNDBUF,
  SOCK_STREAM,
  SOL_SOCKET,
} from '../sys/constants.js';
import {
  bindFd,
  closeFd,
  connectFd,
  createSocket,
  getIntOption,
  listenFd,
  listenOnFd,
  type OnRead,
  setIntOption,
  socketFromFd,
} from '../sys/socket.js';
import { readSysctl } from '../sys/sysctl.js';
import { formatHostPort } from './address.js';
import {
  clampWarning,
  LIMIT_SYSCTL,
  type PinnedBuffer,
  pinnedReport,
  resolveTcpBuffers,
  type TcpBufferOptions,
  type TcpBufferReport,
  UDP_RCVBUF_TARGET,
  type UdpRcvbufReport,
  udpRequest,
  udpWarning,
} from './buffers.js';
import { resolveFirst, resolveHost, tryEach } from './resolve.js';
import { checkHostPort, checkOptionalObject, checkPositive, checkWholeNumber } from './shape.js';
import { shown } from './shown.js';

const warned = new Set<string>();
const reports = new WeakMap<object, TcpBufferReport>();

/**
 * Remembers what was applied to a socket or server, for socketStats. connectPinned and listenPinned
 * call it; call it yourself for a socket re-made from one of theirs (e.g. rewrapAccepted).
 */
export function markPinned(target: net.Socket | net.Server, report: TcpBufferReport): void {
  reports.set(target, report);
}

/** What sockbuf applied to this socket, or to the server that accepted it; undefined if nothing known. */
export function pinnedBuffers(target: net.Socket | net.Server): TcpBufferReport | undefined {
  // Node sets `server` on the sockets a net.Server accepts
  const server = (target as { server?: net.Server }).server;
  return reports.get(target) ?? (server ? reports.get(server) : undefined);
}

/** process.emitWarning once per distinct key for the life of the process (code SOCKBUF_BUFFER). */
export function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  process.emitWarning(message, { code: 'SOCKBUF_BUFFER' });
}

function limitOf(option: 'rcvbuf' | 'sndbuf'): number {
  return readSysctl(LIMIT_SYSCTL[option])?.[0] ?? Number.NaN;
}

function pin(fd: number, option: 'rcvbuf' | 'sndbuf', bytes: number): PinnedBuffer {
  const so = option === 'rcvbuf' ? SO_RCVBUF : SO_SNDBUF;
  setIntOption(fd, SOL_SOCKET, so, bytes);
  const r = pinnedReport(bytes, getIntOption(fd, SOL_SOCKET, so), limitOf(option));
  // the kernel clamps to the limit before doubling: a clamped value tells the limit exactly
  if (r.clamped && Number.isNaN(r.limit)) r.limit = r.effective / 2;
  const w = clampWarning(option, r);
  if (w) warnOnce(`${option}:${bytes}`, w);
  return r;
}

/**
 * Applies TCP buffer options to a socket that is not yet connected or listening. 'auto' (the default)
 * makes no setsockopt call. Throws UsageError for a bad size, SysError if the kernel refuses.
 */
export function applyTcpBuffers(fd: number, opts: TcpBufferOptions = {}): TcpBufferReport {
  checkWholeNumber(fd, 'fd');
  checkOptionalObject(opts);
  const sizes = resolveTcpBuffers(opts);
  const auto = { requested: 'auto', autotuning: true } as const;
  return {
    rcvbuf: sizes.rcvbuf === undefined ? auto : pin(fd, 'rcvbuf', sizes.rcvbuf),
    sndbuf: sizes.sndbuf === undefined ? auto : pin(fd, 'sndbuf', sizes.sndbuf),
  };
}

/**
 * Raises a UDP socket's receive buffer to `wanted` bytes as getsockopt reports them (default 8 MiB):
 * nothing if already there; else SO_RCVBUF, then SO_RCVBUFFORCE where permitted (CAP_NET_ADMIN);
 * reads back; warns once per process (quic-go style) when the target was not met.
 */
export function applyUdpRcvbuf(fd: number, wanted: number = UDP_RCVBUF_TARGET): UdpRcvbufReport {
  checkWholeNumber(fd, 'fd');
  checkWholeNumber(wanted, 'wanted', 1);
  const was = getIntOption(fd, SOL_SOCKET, SO_RCVBUF);
  const limit = readSysctl('net.core.rmem_max')?.[0] ?? Number.NaN;
  const report: UdpRcvbufReport = { wanted, was, got: was, limit, forced: false, met: was >= wanted };
  if (report.met) return report;
  const ask = udpRequest(wanted);
  setIntOption(fd, SOL_SOCKET, SO_RCVBUF, ask);
  report.got = getIntOption(fd, SOL_SOCKET, SO_RCVBUF);
  if (report.got < wanted) {
    try {
      setIntOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, ask);
      report.forced = true;
      report.got = getIntOption(fd, SOL_SOCKET, SO_RCVBUF);
    } catch (e) {
      if (!(e instanceof SysError && e.code === 'EPERM')) throw e;
    }
  }
  report.met = report.got >= wanted;
  const w = udpWarning(report);
  if (w) warnOnce('udp-rcvbuf', w);
  return report;
}

export interface ConnectPinnedOptions extends TcpBufferOptions {
  /** Node's onread, to read into a caller's buffer (see src/sys/socket.ts OnRead). */
  onread?: OnRead;
  /** Give up connecting after this long (SysError ETIMEDOUT); default: the kernel's SYN retries. */
  timeoutSeconds?: number;
  /** Hand the socket over paused: it reads nothing from the kernel until `socket.resume()`. */
  paused?: boolean;
  /** The net.Socket's writableHighWaterMark (Node's default: 16 KiB). */
  writableHighWaterMark?: number;
}

/**
 * A connected net.Socket whose buffers were applied before connect. The socket is created and
 * connected through src/sys (connect runs off the event loop), then handed to Node. A host name is
 * resolved here and each of its addresses tried in turn (src/policy/resolve.ts).
 * Rejects with SysError (ECONNREFUSED …), ResolveError (exit 3) or UsageError (a bad size).
 */
export async function connectPinned(
  to: { host: string; port: number },
  opts: ConnectPinnedOptions = {},
): Promise<{ socket: net.Socket; buffers: TcpBufferReport }> {
  checkHostPort(to, 'to', 1);
  const o = checkOptionalObject(opts);
  if (o.timeoutSeconds !== undefined) checkPositive(o.timeoutSeconds, 'timeoutSeconds', 'seconds');
  if (o.writableHighWaterMark !== undefined)
    checkWholeNumber(o.writableHighWaterMark, 'writableHighWaterMark');
  if (o.onread !== undefined && (typeof o.onread !== 'object' || o.onread === null))
    throw UsageError.invalid('onread', shown(o.onread), "Node's onread object");
  const addresses = await resolveHost(to.host, { option: 'to', value: formatHostPort(to) });
  return tryEach(
    addresses,
    async (host, timeoutSeconds) => {
      const fd = createSocket(host, SOCK_STREAM, IPPROTO_TCP);
      try {
        const buffers = applyTcpBuffers(fd, opts);
        await connectFd(fd, { host, port: to.port }, timeoutSeconds);
        const socket = socketFromFd(fd, opts.onread, opts.paused, opts.writableHighWaterMark);
        markPinned(socket, buffers);
        return { socket, buffers };
      } catch (e) {
        closeFd(fd);
        throw e;
      }
    },
    opts.timeoutSeconds,
  );
}

export interface ListenPinnedOptions extends TcpBufferOptions {
  backlog?: number;
}

/**
 * Makes `server` listen on `at` through a socket whose buffers were applied before listen(); every
 * accepted socket inherits them. A host name is resolved here; the first address is bound. SO_REUSEADDR is set as Node does. Create the server yourself
 * (e.g. net.createServer({ pauseOnConnect: true }) to re-wrap accepted sockets with onread).
 * Port 0 picks a free port: read it from server.address().
 */
export async function listenPinned(
  server: net.Server,
  at: { host: string; port: number },
  opts: ListenPinnedOptions = {},
): Promise<TcpBufferReport> {
  if (!(server instanceof net.Server)) throw UsageError.invalid('server', shown(server), 'a net.Server');
  checkHostPort(at, 'at');
  const o = checkOptionalObject(opts);
  if (o.backlog !== undefined) checkWholeNumber(o.backlog, 'backlog');
  const host = await resolveFirst(at.host, { option: 'listen', value: formatHostPort(at) });
  const fd = createSocket(host, SOCK_STREAM, IPPROTO_TCP);
  try {
    const buffers = applyTcpBuffers(fd, opts);
    setIntOption(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    bindFd(fd, { host, port: at.port });
    listenFd(fd, opts.backlog);
    await listenOnFd(server, fd);
    markPinned(server, buffers);
    return buffers;
  } catch (e) {
    closeFd(fd);
    throw e;
  }
}
