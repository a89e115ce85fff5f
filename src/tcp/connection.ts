// TCP connect/listen with the buffer policy (src/policy: 'auto' = no setsockopt; a size is pinned
// before connect/listen and read back) and a reader (src/tcp/reader.ts) on both connected and
// accepted sockets. Bytes reach `conn.onData` synchronously, one view per read. A connection reads
// nothing from the kernel before `onData` is set: until then the kernel holds the bytes, its window
// closes and the peer waits, as a node:net socket keeps its data until a listener is attached.
import net from 'node:net';
import { EnvironmentError, SysError, UsageError } from '../errors.js';
import { type SocketStats, type StatsInterval, StatsSampler, socketStats } from '../observe/socket-stats.js';
import { trackSource } from '../observe/tracked.js';
import { formatHostPort } from '../policy/address.js';
import { connectPinned, listenPinned, markPinned } from '../policy/apply.js';
import type { TcpBufferOptions, TcpBufferReport } from '../policy/buffers.js';
import {
  checkFunction,
  checkHost,
  checkObject,
  checkPort,
  checkPositive,
  checkWholeNumber,
} from '../policy/shape.js';
import { shown } from '../policy/shown.js';
import { fdOf, rewrapAccepted } from '../sys/socket.js';
import {
  type Consumer,
  Reader,
  type ReaderOption,
  type ReaderSpec,
  type ReaderStats,
  resolveReader,
} from './reader.js';

/** socketStats (tcp_info and buffers; absent once the socket is gone and was never sampled) + the reader's. */
export type TcpStats = Partial<SocketStats> & { reader: ReaderStats };

/** One TCP connection read through a sockbuf reader. */
export class TcpConnection {
  /** Set when the socket closed with an error (a reset, a consumer that threw …). */
  error: Error | undefined;
  /** Resolves when the socket has closed, with its error if any. Never rejects. */
  readonly closed: Promise<Error | undefined>;
  readonly openedAt = performance.now();
  private lastSocketStats: SocketStats | undefined;
  private sampler: StatsSampler | undefined;
  private reading = false;

  /** Wraps an open socket (what connect() and listen() do); reading starts when onData is set. */
  constructor(
    readonly socket: net.Socket,
    readonly reader: Reader,
    readonly buffers: TcpBufferReport,
    /**
     * The `name` label registerMetrics gives this connection: its listener's address (an accepted
     * one), or 'client HOST:PORT' with the address it connects to (one made by connect()).
     */
    name = 'client',
  ) {
    if (!(socket instanceof net.Socket)) throw UsageError.invalid('socket', shown(socket), 'a net.Socket');
    if (!(reader instanceof Reader)) throw UsageError.invalid('reader', shown(reader), 'a sockbuf Reader');
    socket.on('error', (err) => {
      this.error ??= err;
    });
    const untrack = trackSource({
      kind: 'tcp',
      name,
      stats: () => ({
        readBufferBytes: reader.stats().sizeBytes,
        fd: socket.destroyed ? undefined : fdOf(socket),
      }),
    });
    socket.once('close', untrack);
    // the last look at tcp_info before the socket goes: at the peer's FIN
    socket.once('end', () => this.socketStats());
    this.closed = new Promise((resolve) => socket.once('close', () => resolve(this.error)));
  }

  /**
   * Where each chunk goes; called synchronously with a view valid only during the call. The socket
   * starts reading when this is first set (bytes that arrived before wait in the kernel).
   */
  get onData(): Consumer {
    return this.reader.consumer;
  }

  /** Sets where each chunk goes; the first set starts reading. */
  set onData(fn: Consumer) {
    this.reader.consumer = fn;
    if (!this.reading) {
      this.reading = true;
      this.socket.resume();
    }
  }

  /**
   * Writes `data` (a Buffer, Uint8Array or string, as UTF-8). Resolves as soon as the socket took it
   * and stays under its writableHighWaterMark, else when the socket has drained below it: awaiting each
   * write is back-pressure (at most about one high-water mark waits in the process above the kernel's
   * send buffer). Rejects with an EnvironmentError (`.code` as Node's: EPIPE, ECONNRESET,
   * ERR_STREAM_DESTROYED …) when the connection closed first.
   */
  write(data: Uint8Array | string): Promise<void> {
    if (!(data instanceof Uint8Array) && typeof data !== 'string')
      return Promise.reject(UsageError.invalid('data', shown(data), 'a Buffer, Uint8Array or string'));
    const socket = this.socket;
    return new Promise((resolve, reject) => {
      const fail = (err: Error | null | undefined) => {
        if (!settled) reject(writeError(err ?? this.error));
        done();
      };
      const drained = () => done(resolve);
      const closed = () => fail(this.error);
      let settled = false;
      const done = (then?: () => void) => {
        if (settled) return;
        settled = true;
        socket.off('drain', drained);
        socket.off('close', closed);
        then?.();
      };
      if (socket.destroyed || socket.writableEnded) return fail(undefined);
      const ok = socket.write(data, (err) => {
        if (err) fail(err);
      });
      if (ok) return done(resolve);
      socket.once('drain', drained);
      socket.once('close', closed);
    });
  }

  /**
   * Ends the sending side: what was written is flushed, then a FIN goes. Resolves when the peer's
   * side is done too (its FIN read, which needs `onData` set; without one, once the FIN is sent) or
   * the socket closed. Never rejects; a failure is in `error`.
   */
  end(): Promise<void> {
    const socket = this.socket;
    if (socket.destroyed) return Promise.resolve();
    const peerDone = new Promise<void>((resolve) => {
      if (socket.readableEnded) return resolve();
      socket.once('end', () => resolve());
      socket.once('close', () => resolve());
    });
    const sent = new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      if (socket.writableFinished) resolve();
      else socket.end(() => resolve());
    });
    return sent.then(() => (this.reading && !socket.destroyed ? peerDone : undefined));
  }

  /** Closes the connection at once (what is not yet sent is dropped). Idempotent; `closed` resolves after. */
  close(): void {
    this.socket.destroy();
  }

  /** socketStats now, or the last one taken while the socket was open. */
  socketStats(): SocketStats | undefined {
    if (!this.socket.destroyed) {
      try {
        this.lastSocketStats = socketStats(this.socket);
      } catch {
        // closed under us: keep the last sample
      }
    }
    return this.lastSocketStats;
  }

  /** What changed since the previous call (the first: since the connection opened): limited %, bytes. */
  sample(): StatsInterval | undefined {
    if (this.socket.destroyed) return undefined;
    try {
      this.sampler ??= new StatsSampler(this.socket);
      return this.sampler.sample();
    } catch {
      return undefined;
    }
  }

  /** The socket's statistics now (the last ones once it closed) and the reader's. */
  stats(): TcpStats {
    return { ...this.socketStats(), reader: this.reader.stats() };
  }

  /** stats() with rwndLimitedPct/sndbufLimitedPct over the interval since the previous call. */
  intervalStats(): TcpStats {
    const d = this.sample();
    if (d === undefined) return this.stats();
    this.lastSocketStats = d.now;
    return {
      ...d.now,
      rwndLimitedPct: d.rwndLimitedPct,
      sndbufLimitedPct: d.sndbufLimitedPct,
      reader: this.reader.stats(),
    };
  }
}

export interface ConnectOptions extends TcpBufferOptions {
  /** An address or a host name (resolved at connect with dns.lookup; each address tried in turn). */
  host: string;
  port: number;
  /** How bytes are read: 'adaptive' (default), { adaptive: { min, max } }, { fixed: size } or 'data'. */
  reader?: ReaderOption | ReaderSpec;
  /** The consumer from the start; without it, nothing is read until `conn.onData` is set. */
  onData?: Consumer;
  /**
   * Bytes socket.write() queues in this process before it returns false (Node's default: 16 KiB): a
   * writer that waits for 'drain' keeps at most about this much in the process above the kernel's send
   * buffer, as Netty's WRITE_BUFFER_WATER_MARK does for a writer that checks isWritable().
   */
  writableHighWaterMark?: number;
  /** Give up connecting after this long (an EnvironmentError naming ETIMEDOUT); default: the kernel's SYN retries. */
  timeoutSeconds?: number;
}

/** Why a write did not go: the connection closed first (Node's error as the cause, its code kept). */
function writeError(err: Error | undefined): EnvironmentError {
  if (err instanceof EnvironmentError) return err;
  const e = err ?? Object.assign(new Error('the connection is closed'), { code: 'ERR_STREAM_DESTROYED' });
  return new EnvironmentError(`write failed: ${e.message}`, { cause: e });
}

/** A peer that cannot be reached: the environment refused (exit 3), not a bug. */
const UNREACHABLE = [
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ECONNRESET',
];

/**
 * Connects; buffers set in `opts` are applied before the SYN. Rejects with UsageError (a bad option),
 * EnvironmentError (a peer that refuses or cannot be reached; `.code` and `.syscall` as the kernel
 * said: ECONNREFUSED …) or SysError.
 */
export async function connect(opts: ConnectOptions): Promise<TcpConnection> {
  checkConnectOptions(opts);
  const reader = new Reader(resolveReader(opts.reader));
  const { socket, buffers } = await connectPinned(
    { host: opts.host, port: opts.port },
    {
      rcvbuf: opts.rcvbuf,
      sndbuf: opts.sndbuf,
      onread: reader.onread(),
      paused: true,
      writableHighWaterMark: opts.writableHighWaterMark,
      timeoutSeconds: opts.timeoutSeconds,
    },
  ).catch((e) => {
    if (e instanceof SysError && UNREACHABLE.includes(e.code))
      throw new EnvironmentError(`cannot connect to ${formatHostPort(opts)}: ${e.code}`, { cause: e });
    throw e;
  });
  reader.attach(socket);
  // labelled by where it connects (as written: a name stays a name), never by its ephemeral port
  const conn = new TcpConnection(socket, reader, buffers, `client ${formatHostPort(opts)}`);
  if (opts.onData) conn.onData = opts.onData;
  return conn;
}

/** What connect() takes, checked at run time (a plain-JS caller's wrong shape is a UsageError). */
function checkConnectOptions(opts: ConnectOptions): void {
  const o = checkObject(opts);
  checkHost(o.host, 'host');
  checkPort(o.port, 'port', 1);
  checkCommon(o);
  if (o.onData !== undefined) checkFunction(o.onData, 'onData');
  if (o.timeoutSeconds !== undefined) checkPositive(o.timeoutSeconds, 'timeoutSeconds', 'seconds');
}

/** The options connect() and listen() share: writableHighWaterMark (the sizes are parsed where used). */
function checkCommon(o: Record<string, unknown>): void {
  if (o.writableHighWaterMark !== undefined)
    checkWholeNumber(o.writableHighWaterMark, 'writableHighWaterMark');
}

export interface ListenOptions extends TcpBufferOptions {
  /** An address or a host name (its first address is bound; `server.host` says which). Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port (read it from `server.port`). */
  port: number;
  reader?: ReaderOption | ReaderSpec;
  backlog?: number;
  /** Every accepted socket's writableHighWaterMark (see ConnectOptions). */
  writableHighWaterMark?: number;
}

/** A listening TCP socket whose connections read through sockbuf's reader (what listen resolves with). */
export class TcpServer {
  readonly connections = new Set<TcpConnection>();

  /** Wraps a listening net.Server (what listen() does). */
  constructor(
    readonly server: net.Server,
    readonly host: string,
    readonly port: number,
    readonly buffers: TcpBufferReport,
  ) {
    if (!(server instanceof net.Server)) throw UsageError.invalid('server', shown(server), 'a net.Server');
  }

  /** The address bound, as net.Server's address() says it (also after close). */
  address(): net.AddressInfo {
    return { address: this.host, family: net.isIPv6(this.host) ? 'IPv6' : 'IPv4', port: this.port };
  }

  /** Stops accepting; with `destroy`, also closes every open connection. */
  close(destroy = false): Promise<void> {
    if (destroy) for (const c of this.connections) c.close();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Listens; buffers set in `opts` are applied to the listening socket before listen(), and every
 * accepted socket inherits them. Each accepted socket is read through its own reader and handed to
 * `onConnection`; it reads nothing until `conn.onData` is set. A port in use (or not permitted) is an
 * EnvironmentError.
 */
export async function listen(
  opts: ListenOptions,
  onConnection: (conn: TcpConnection) => void,
): Promise<TcpServer> {
  const o = checkObject(opts);
  if (o.host !== undefined) checkHost(o.host, 'host');
  checkPort(o.port, 'port');
  checkCommon(o);
  if (o.backlog !== undefined) checkWholeNumber(o.backlog, 'backlog');
  checkFunction(onConnection, 'onConnection');
  const spec = resolveReader(opts.reader);
  const host = opts.host ?? '127.0.0.1';
  const server = net.createServer({ pauseOnConnect: true });
  let buffers: TcpBufferReport;
  try {
    buffers = await listenPinned(server, { host, port: opts.port }, opts);
  } catch (e) {
    if (e instanceof SysError && ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(e.code)) {
      const where = formatHostPort({ host, port: opts.port });
      const why = e.code === 'EADDRINUSE' ? 'address already in use' : e.code;
      throw new EnvironmentError(`cannot listen on ${where}: ${why} (${e.message})`, { cause: e });
    }
    throw e;
  }
  // the address bound (a host name was resolved by listenPinned)
  const { address: bound, port } = server.address() as net.AddressInfo;
  const tcp = new TcpServer(server, bound, port, buffers);
  server.on('connection', (raw: net.Socket) => {
    const reader = new Reader(spec);
    const onread = reader.onread();
    let socket = raw;
    try {
      if (onread || opts.writableHighWaterMark !== undefined)
        socket = rewrapAccepted(raw, onread, opts.writableHighWaterMark);
    } catch {
      raw.destroy(); // closed before we got to it
      return;
    }
    reader.attach(socket);
    markPinned(socket, buffers);
    const conn = new TcpConnection(socket, reader, buffers, formatHostPort({ host: bound, port }));
    tcp.connections.add(conn);
    conn.closed.then(() => tcp.connections.delete(conn));
    onConnection(conn);
  });
  return tcp;
}
