// `sockbuf serve`: the remote end for any benchmark, like iperf3 -s. A control connection speaks the
// JSON-lines protocol of protocol.ts; a test request starts the far end (a `sockbuf sink …` child in
// its own process group, listening on the address the client reached us at), the client is told its
// port, and when the far end exits the client gets every JSON line it printed (its results and
// socketStats). One test at a time; a second client is told "busy, try again". Idle control
// connections are closed after a timeout; a client that goes away mid-test has its far end killed
// and reaped, so its ports are free before the next test starts.
import net from 'node:net';
import { newSecret } from '../ends/hello.js';
import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { resolveFirst } from '../policy/resolve.js';
import { VERSION } from '../sys/package.js';
import type { SpawnSpec } from '../sys/process.js';
import { defaultFarEnd, type FarEndProcess, startFarEnd } from './far-end-process.js';
import {
  encodeMessage,
  FAR_END_STOP_SECONDS,
  KINDS,
  LineDecoder,
  PROTOCOL_VERSION,
  ProtocolError,
  type ResultReply,
} from './protocol.js';
import { type Limits, parseRequest, type TestRequest } from './request.js';

/** What startServer takes: where it listens, its token, its caps and its log. */
export interface ServeOptions extends Limits {
  listen: HostPort;
  token?: string;
  /** A control connection with no test running that says nothing this long is closed. */
  idleSeconds: number;
  /** How long the far end may take to print its ready line. */
  readySeconds?: number;
  /** After the client's `done`, how long the far end may take to finish by itself before SIGTERM. */
  graceSeconds?: number;
  /** Control connections open at once; more are refused by the kernel backlog / closed at once. */
  maxConnections?: number;
  /** Control connections open at once from one client address (default 8); more are told why and closed. */
  maxPerClient?: number;
  /** The process that runs a far end (`args` are sockbuf's: `sink tcp --listen …`). */
  farEnd?: (args: string[]) => SpawnSpec;
  /** Gets a line for each refused request, lost control connection and failed test. */
  log?: (line: string) => void;
}

export const DEFAULT_MAX_PER_CLIENT = OPTIONS.maxPerClient.default;

/** A client that does not read its replies is dropped once this much is queued for it. */
const MAX_QUEUED_WRITE = 1 << 20;

interface Session {
  id: number;
  socket: net.Socket;
  peer: string;
  /** The client's address (what --max-per-client counts). */
  address: string;
  /**
   * Closes the connection when no test request (token checked) came for idleSeconds: bytes, hellos
   * and refused lines do not count, so holding a connection open costs a test request each time.
   */
  idle?: NodeJS.Timeout;
  test?: { req: TestRequest; far: FarEndProcess; done: boolean };
}

/** A running `sockbuf serve`: its address and close(). */
export interface ServeHandle {
  address: HostPort;
  /** Stops accepting, ends every control connection, kills a running far end. */
  close(): Promise<void>;
  /** The connection running a test, if any (tests and status). */
  readonly busy: boolean;
  readonly connections: number;
}

/** Strips the IPv4-mapped prefix Node reports on dual-stack sockets. */
function plainAddress(a: string | undefined): string {
  return (a ?? '127.0.0.1').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/** The limits a server is started with, checked before it listens (names as a program writes them). */
function checkOptions(opts: ServeOptions): void {
  checkOption('maxDuration', opts.maxDurationSeconds, 'maxDurationSeconds');
  checkOption('idleTimeout', opts.idleSeconds, 'idleSeconds');
  checkOption('maxBytes', opts.maxBytes);
  if (opts.maxPerClient !== undefined) checkWhole('maxPerClient', opts.maxPerClient);
  if (opts.token !== undefined && !(typeof opts.token === 'string' && opts.token.length > 0))
    throw UsageError.invalid('token', opts.token, 'a token');
}

/** Starts `sockbuf serve`: listening once this resolves. */
export async function startServer(opts: ServeOptions): Promise<ServeHandle> {
  checkOptions(opts);
  const server = new Server(opts);
  await server.listen();
  return server;
}

type ResultLines = Omit<ResultReply, 'lines'> & { lines: unknown[]; droppedLines?: number };

/** One `sockbuf serve`: its control connections (sessions), the test running, the far end's process. */
class Server implements ServeHandle {
  address: HostPort = { host: '', port: 0 };
  private readonly sessions = new Set<Session>();
  /** The session whose test runs (one at a time). */
  private running: Session | undefined;
  private nextId = 1;
  /** Control connections open per client address (what --max-per-client counts). */
  private readonly perClient = new Map<string, number>();
  private readonly server: net.Server;
  private readonly log: (line: string) => void;
  private readonly limits: Limits;
  private readonly readySeconds: number;
  private readonly graceSeconds: number;

  constructor(private readonly opts: ServeOptions) {
    this.log = opts.log ?? (() => {});
    this.limits = { maxDurationSeconds: opts.maxDurationSeconds, maxBytes: opts.maxBytes };
    this.readySeconds = opts.readySeconds ?? 10;
    this.graceSeconds = opts.graceSeconds ?? 5;
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.maxConnections = opts.maxConnections ?? 512;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get connections(): number {
    return this.sessions.size;
  }

  async listen(): Promise<void> {
    const host = await resolveFirst(this.opts.listen.host, {
      option: 'listen',
      value: formatHostPort(this.opts.listen),
    });
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port: this.opts.listen.port, exclusive: true }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address() as net.AddressInfo;
    this.address = { host: plainAddress(addr.address), port: addr.port };
  }

  async close(): Promise<void> {
    const far = this.running?.test?.far;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sessions) s.socket.destroy();
    if (far) await far.end('server closing', 1);
    await closed;
  }

  /** A new control connection: refused past --max-per-client, else a session that reads lines. */
  private accept(socket: net.Socket): void {
    const address = plainAddress(socket.remoteAddress);
    const s: Session = {
      id: this.nextId++,
      socket,
      address,
      peer: `${socket.remoteAddress}:${socket.remotePort}`,
    };
    socket.on('error', () => {});
    const open = this.perClient.get(address) ?? 0;
    const max = this.opts.maxPerClient ?? DEFAULT_MAX_PER_CLIENT;
    if (open >= max) {
      const why = `too many connections from ${address}: ${open} open (serve --max-per-client ${max})`;
      this.refuse(s, new ProtocolError('busy', why));
      socket.destroySoon();
      return;
    }
    this.perClient.set(address, open + 1);
    this.sessions.add(s);
    const decoder = new LineDecoder();
    socket.setNoDelay(true);
    this.armIdle(s);
    socket.on('data', (chunk: Buffer) => this.onData(s, decoder, chunk));
    socket.on('close', () => this.onClose(s));
  }

  private onData(s: Session, decoder: LineDecoder, chunk: Buffer): void {
    let lines: string[];
    try {
      lines = decoder.push(chunk);
    } catch (err) {
      // the stream cannot be resynchronised after an over-long line: say why, then hang up
      this.refuse(s, err as ProtocolError);
      this.hangUp(s);
      return;
    }
    for (const line of lines) {
      if (s.socket.destroyed) return;
      try {
        this.onLine(s, line);
      } catch (err) {
        // whatever one connection's line does, it ends that connection, never the server
        const why = (err as Error).message;
        this.log(`#${s.id} ${s.peer}: ${why}`);
        this.refuse(s, new ProtocolError('failed', `the server could not handle that line: ${why}`));
        this.hangUp(s);
        return;
      }
    }
  }

  private onClose(s: Session): void {
    clearTimeout(s.idle);
    this.sessions.delete(s);
    const left = (this.perClient.get(s.address) ?? 1) - 1;
    if (left > 0) this.perClient.set(s.address, left);
    else this.perClient.delete(s.address);
    if (s.test) {
      this.log(`#${s.id} ${s.peer}: control connection lost mid-test; stopping the far end`);
      void s.test.far.end('client gone', 1);
    }
  }

  private onLine(s: Session, line: string): void {
    let req: ReturnType<typeof parseRequest>;
    try {
      req = parseRequest(line, this.limits, this.opts.token);
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      this.refuse(s, err);
      return;
    }
    // only a test request (its token checked) keeps a connection: a hello costs nothing to send
    if (!s.test && req.type === 'test') this.armIdle(s);
    if (req.type === 'hello') this.hello(s);
    else if (req.type === 'done') this.done(s, req.now);
    else this.startTest(s, req);
  }

  private hello(s: Session): void {
    this.send(s, {
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      version: VERSION,
      kinds: [...KINDS],
      maxDurationSeconds: this.opts.maxDurationSeconds,
      maxBytes: this.opts.maxBytes,
      tokenRequired: this.opts.token !== undefined,
    });
  }

  /**
   * The client's end is done: the far end usually finishes by itself; if not, it is told to after the
   * grace. `now` (the client was stopped by a signal): it is told at once, so that its results reach
   * the client within the client's own stop time.
   */
  private done(s: Session, now: boolean): void {
    if (!s.test) {
      this.refuse(s, new ProtocolError('bad-request', 'no test is running on this connection'));
      return;
    }
    if (s.test.done) return;
    s.test.done = true;
    const far = s.test.far;
    const end = () => {
      if (far.running) void far.end('done', FAR_END_STOP_SECONDS);
    };
    if (now) end();
    else setTimeout(end, this.graceSeconds * 1000).unref();
  }

  private startTest(s: Session, req: TestRequest): void {
    if (s.test) {
      this.refuse(s, new ProtocolError('bad-request', 'a test is already running on this connection'));
      return;
    }
    if (this.running) {
      this.refuse(s, new ProtocolError('busy', 'busy, try again: another test is running'));
      return;
    }
    this.runTest(s, req).catch((err) => {
      this.log(`#${s.id} ${s.peer}: test failed: ${(err as Error).message}`);
      this.send(s, { type: 'error', code: 'failed', message: (err as Error).message });
    });
  }

  private async runTest(s: Session, req: TestRequest): Promise<void> {
    const limit = Math.min(req.durationSeconds ?? this.opts.maxDurationSeconds, this.opts.maxDurationSeconds);
    const secret = newSecret();
    const { far, args } = startFarEnd(req, {
      local: plainAddress(s.socket.localAddress),
      client: plainAddress(s.socket.remoteAddress),
      maxBytes: this.opts.maxBytes,
      maxSeconds: limit + Math.min(2, this.graceSeconds),
      secret,
      spawn: this.opts.farEnd ?? defaultFarEnd,
    });
    s.test = { req, far, done: false };
    this.running = s;
    clearTimeout(s.idle);
    this.log(`#${s.id} ${s.peer}: ${req.kind} test, far end: sockbuf ${args.join(' ')}`);
    const grace = this.graceSeconds;
    const deadline = setTimeout(
      () => void far.end(`deadline: the test ran past ${limit} s + ${grace} s`),
      (limit + grace) * 1000,
    );
    try {
      const port = await far.ready(this.readySeconds, this.opts.maxBytes);
      if (port === undefined) return await this.notReady(s, far);
      this.send(s, { type: 'ready', kind: req.kind, port, secret });
      await this.finish(s, req, far);
    } finally {
      clearTimeout(deadline);
      if (far.running) await far.end('ended');
      s.test = undefined;
      if (this.running === s) this.running = undefined;
      if (!s.socket.destroyed) this.armIdle(s);
    }
  }

  private async notReady(s: Session, far: FarEndProcess): Promise<void> {
    if (far.running) await far.end('not ready in time');
    const why = far.stderrTail.slice(-5).join(' | ') || `no ready line within ${this.readySeconds} s`;
    this.send(s, { type: 'error', code: 'failed', message: `the far end could not start: ${why}` });
  }

  /** Once the far end exited (and its group was reaped): the result with every line it printed. */
  private async finish(s: Session, req: TestRequest, far: FarEndProcess): Promise<void> {
    const { code, signal } = await far.exited;
    await far.end('finished'); // reaps the rest of its group
    const result: ResultLines = {
      type: 'result',
      kind: req.kind,
      exitCode: code,
      signal,
      lines: far.lines,
      stderr: far.stderrTail.join('\n').slice(-4000),
    };
    if (far.stopped && far.stopped !== 'finished') result.stopped = far.stopped;
    if (far.dropped) result.droppedLines = far.dropped;
    this.sendResult(s, result);
    const how = `${code ?? signal}${result.stopped ? `, ${result.stopped}` : ''}`;
    this.log(`#${s.id} ${s.peer}: ${req.kind} test ended (${how})`);
  }

  /** A result line is capped like any other: drop far-end lines from the middle until it fits. */
  private sendResult(s: Session, result: ResultLines): void {
    for (;;) {
      try {
        this.send(s, result);
        return;
      } catch (err) {
        if (!(err instanceof ProtocolError) || result.lines.length === 0) throw err;
        const cut = Math.ceil(result.lines.length / 4);
        const mid = Math.floor(result.lines.length / 2) - Math.floor(cut / 2);
        result.lines.splice(Math.max(1, mid), cut);
        result.droppedLines = (result.droppedLines ?? 0) + cut;
      }
    }
  }

  private send(s: Session, msg: object): void {
    if (s.socket.destroyed) return;
    if (s.socket.writableLength > MAX_QUEUED_WRITE) {
      this.log(`#${s.id} ${s.peer}: not reading its replies; closed`);
      s.socket.destroy();
      return;
    }
    s.socket.write(encodeMessage(msg));
  }

  private refuse(s: Session, err: ProtocolError): void {
    this.log(`#${s.id} ${s.peer}: refused (${err.reason}): ${err.message}`);
    this.send(s, { type: 'error', code: err.reason, message: err.message });
  }

  /** (Re)starts the idle timer: a connection that sends no test request in time is closed. */
  private armIdle(s: Session): void {
    clearTimeout(s.idle);
    s.idle = setTimeout(() => {
      if (s.test) return;
      const message = `closed: no test request for ${this.opts.idleSeconds} s`;
      this.send(s, { type: 'error', code: 'idle', message });
      this.hangUp(s);
    }, this.opts.idleSeconds * 1000);
  }

  private hangUp(s: Session): void {
    s.socket.end();
    s.socket.pause();
    setTimeout(() => s.socket.destroy(), 1000).unref();
  }
}
