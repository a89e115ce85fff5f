// `sockbuf serve`: the remote end for any benchmark, like iperf3 -s. A control connection speaks the
// JSON-lines protocol of protocol.ts; a test request starts the far end (a `sockbuf sink …` child in
// its own process group, listening on the address the client reached us at), the client is told its
// port, and when the far end exits the client gets every JSON line it printed (its results and
// socketStats). One test at a time; a second client is told "busy, try again". Idle control
// connections are closed after a timeout; a client that goes away mid-test has its far end killed
// and reaped, so its ports are free before the next test starts.
import net from 'node:net';
import { FAR_END_ENV, type FarEndLimits } from '../ends/far-end-limits.js';
import { newSecret } from '../ends/hello.js';
import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { checkWhole } from '../policy/limits.js';
import { resolveFirst } from '../policy/resolve.js';
import { VERSION } from '../sys/package.js';
import type { SpawnSpec } from '../sys/process.js';
import { defaultFarEnd, FAR_END_COMMAND, FarEndProcess } from './far-end-process.js';
import {
  encodeMessage,
  KINDS,
  LineDecoder,
  PROTOCOL_VERSION,
  ProtocolError,
  type ResultReply,
} from './protocol.js';
import { farArgs, KIND_SPECS, type Limits, MAX_STREAMS, parseRequest, type TestRequest } from './request.js';

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
  log?: (line: string) => void;
}

export const DEFAULT_MAX_PER_CLIENT = 8;

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
  for (const name of ['maxDurationSeconds', 'idleSeconds'] as const) {
    const v = opts[name];
    if (!(typeof v === 'number' && v > 0 && v <= 86400))
      throw UsageError.invalid(name, `${v} s`, '1ms to 24h');
  }
  if (!(Number.isSafeInteger(opts.maxBytes) && opts.maxBytes >= 1))
    throw UsageError.invalid('maxBytes', opts.maxBytes, 'at least 1 byte');
  if (opts.maxPerClient !== undefined) checkWhole('maxPerClient', opts.maxPerClient);
  if (opts.token !== undefined && !(typeof opts.token === 'string' && opts.token.length > 0))
    throw UsageError.invalid('token', opts.token, 'a token');
}

export async function startServer(opts: ServeOptions): Promise<ServeHandle> {
  checkOptions(opts);
  const log = opts.log ?? (() => {});
  const farEndSpec = opts.farEnd ?? defaultFarEnd;
  const readySeconds = opts.readySeconds ?? 10;
  const graceSeconds = opts.graceSeconds ?? 5;
  const limits: Limits = { maxDurationSeconds: opts.maxDurationSeconds, maxBytes: opts.maxBytes };
  const sessions = new Set<Session>();
  let running: Session | undefined;
  let nextId = 1;

  const send = (s: Session, msg: object) => {
    if (s.socket.destroyed) return;
    if (s.socket.writableLength > MAX_QUEUED_WRITE) {
      log(`#${s.id} ${s.peer}: not reading its replies; closed`);
      s.socket.destroy();
      return;
    }
    s.socket.write(encodeMessage(msg));
  };
  const refuse = (s: Session, err: ProtocolError) => {
    log(`#${s.id} ${s.peer}: refused (${err.code}): ${err.message}`);
    send(s, { type: 'error', code: err.code, message: err.message });
  };

  async function runTest(s: Session, req: TestRequest): Promise<void> {
    const host = plainAddress(s.socket.localAddress);
    const args = [
      ...FAR_END_COMMAND[req.kind],
      ...farArgs(req),
      '--listen',
      formatHostPort({ host, port: 0 }),
      '--json',
    ];
    const limit = Math.min(req.durationSeconds ?? opts.maxDurationSeconds, opts.maxDurationSeconds);
    // the far end enforces serve's caps itself, on its own data port, and takes only this test's
    // client: the secret goes to the client in the ready reply and to the far end in its environment
    const secret = newSecret();
    const caps: FarEndLimits = {
      secret,
      maxBytes: opts.maxBytes,
      maxSeconds: limit + Math.min(2, graceSeconds),
      maxFrame: KIND_SPECS[req.kind].maxMessage,
      maxStreams: MAX_STREAMS,
      peer: plainAddress(s.socket.remoteAddress),
    };
    const spec = farEndSpec(args);
    const far = new FarEndProcess({ ...spec, env: { ...spec.env, [FAR_END_ENV]: JSON.stringify(caps) } });
    s.test = { req, far, done: false };
    running = s;
    clearTimeout(s.idle);
    log(`#${s.id} ${s.peer}: ${req.kind} test, far end: sockbuf ${args.join(' ')}`);
    const deadline = setTimeout(
      () => void far.end(`deadline: the test ran past ${limit} s + ${graceSeconds} s`),
      (limit + graceSeconds) * 1000,
    );
    try {
      const port = await far.ready(readySeconds, opts.maxBytes);
      if (port === undefined) {
        if (far.running) await far.end('not ready in time');
        const why = far.stderrTail.slice(-5).join(' | ') || `no ready line within ${readySeconds} s`;
        send(s, { type: 'error', code: 'failed', message: `the far end could not start: ${why}` });
        return;
      }
      send(s, { type: 'ready', kind: req.kind, port, secret });
      const { code, signal } = await far.exited;
      await far.end('finished'); // reaps the rest of its group
      const result: Omit<ResultReply, 'lines'> & { lines: unknown[]; droppedLines?: number } = {
        type: 'result',
        kind: req.kind,
        exitCode: code,
        signal,
        lines: far.lines,
        stderr: far.stderrTail.join('\n').slice(-4000),
      };
      if (far.stopped && far.stopped !== 'finished') result.stopped = far.stopped;
      if (far.dropped) result.droppedLines = far.dropped;
      sendResult(s, result);
      log(
        `#${s.id} ${s.peer}: ${req.kind} test ended (${code ?? signal}${result.stopped ? `, ${result.stopped}` : ''})`,
      );
    } finally {
      clearTimeout(deadline);
      if (far.running) await far.end('ended');
      s.test = undefined;
      if (running === s) running = undefined;
      if (!s.socket.destroyed) armIdle(s);
    }
  }

  /** A result line is capped like any other: drop far-end lines from the middle until it fits. */
  function sendResult(s: Session, result: { lines: unknown[]; droppedLines?: number }): void {
    for (;;) {
      try {
        send(s, result);
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

  /** (Re)starts the idle timer: a connection that sends no test request in time is closed. */
  function armIdle(s: Session): void {
    clearTimeout(s.idle);
    s.idle = setTimeout(() => {
      if (s.test) return;
      send(s, { type: 'error', code: 'idle', message: `closed: no test request for ${opts.idleSeconds} s` });
      hangUp(s);
    }, opts.idleSeconds * 1000);
  }

  function hangUp(s: Session): void {
    s.socket.end();
    s.socket.pause();
    setTimeout(() => s.socket.destroy(), 1000).unref();
  }

  function onLine(s: Session, line: string): void {
    let req: ReturnType<typeof parseRequest>;
    try {
      req = parseRequest(line, limits, opts.token);
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
      refuse(s, err);
      return;
    }
    // only a test request (its token checked) keeps a connection: a hello costs nothing to send
    if (!s.test && req.type === 'test') armIdle(s);
    if (req.type === 'hello') {
      send(s, {
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        version: VERSION,
        kinds: [...KINDS],
        maxDurationSeconds: opts.maxDurationSeconds,
        maxBytes: opts.maxBytes,
        tokenRequired: opts.token !== undefined,
      });
      return;
    }
    if (req.type === 'done') {
      if (!s.test) {
        refuse(s, new ProtocolError('bad-request', 'no test is running on this connection'));
        return;
      }
      if (s.test.done) return;
      s.test.done = true;
      const far = s.test.far;
      // the far end usually finishes by itself once the client's end is gone; if not, it is told to
      setTimeout(() => {
        if (far.running) void far.end('done');
      }, graceSeconds * 1000).unref();
      return;
    }
    if (s.test) {
      refuse(s, new ProtocolError('bad-request', 'a test is already running on this connection'));
      return;
    }
    if (running) {
      refuse(s, new ProtocolError('busy', 'busy, try again: another test is running'));
      return;
    }
    runTest(s, req).catch((err) => {
      log(`#${s.id} ${s.peer}: test failed: ${(err as Error).message}`);
      send(s, { type: 'error', code: 'failed', message: (err as Error).message });
    });
  }

  const maxPerClient = opts.maxPerClient ?? DEFAULT_MAX_PER_CLIENT;
  const perClient = new Map<string, number>();
  const server = net.createServer((socket) => {
    const address = plainAddress(socket.remoteAddress);
    const s: Session = {
      id: nextId++,
      socket,
      address,
      peer: `${socket.remoteAddress}:${socket.remotePort}`,
    };
    socket.on('error', () => {});
    const open = perClient.get(address) ?? 0;
    if (open >= maxPerClient) {
      refuse(
        s,
        new ProtocolError(
          'busy',
          `too many connections from ${address}: ${open} open (serve --max-per-client ${maxPerClient})`,
        ),
      );
      socket.destroySoon();
      return;
    }
    perClient.set(address, open + 1);
    sessions.add(s);
    const decoder = new LineDecoder();
    socket.setNoDelay(true);
    armIdle(s);
    socket.on('data', (chunk: Buffer) => {
      let lines: string[];
      try {
        lines = decoder.push(chunk);
      } catch (err) {
        // the stream cannot be resynchronised after an over-long line: say why, then hang up
        refuse(s, err as ProtocolError);
        hangUp(s);
        return;
      }
      for (const line of lines) {
        if (socket.destroyed) return;
        try {
          onLine(s, line);
        } catch (err) {
          // whatever one connection's line does, it ends that connection, never the server
          log(`#${s.id} ${s.peer}: ${(err as Error).message}`);
          refuse(
            s,
            new ProtocolError('failed', `the server could not handle that line: ${(err as Error).message}`),
          );
          hangUp(s);
          return;
        }
      }
    });
    socket.on('close', () => {
      clearTimeout(s.idle);
      sessions.delete(s);
      const left = (perClient.get(address) ?? 1) - 1;
      if (left > 0) perClient.set(address, left);
      else perClient.delete(address);
      if (s.test) {
        log(`#${s.id} ${s.peer}: control connection lost mid-test; stopping the far end`);
        void s.test.far.end('client gone', 1);
      }
    });
  });
  server.maxConnections = opts.maxConnections ?? 512;

  const listenHost = await resolveFirst(opts.listen.host);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listenHost, port: opts.listen.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;

  return {
    address: { host: plainAddress(addr.address), port: addr.port },
    get busy() {
      return running !== undefined;
    },
    get connections() {
      return sessions.size;
    },
    async close() {
      const far = running?.test?.far;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.socket.destroy();
      if (far) await far.end('server closing', 1);
      await closed;
    },
  };
}
