// The receiving side of a TCP test, `sockbuf sink tcp`: accepts, reads every connection through its
// reader, and reports per connection. Each connection starts with blast's hello (src/ends/hello.ts);
// after it the bytes are counted, and with `verify` decoded as frames and checked against the pattern.
// A hello asking for reverse makes the sink send the pattern instead. With `echo` (the far end of
// bench ping) there is no hello: every frame read is written back as it is.

import { PeerError, UsageError } from '../errors.js';
import { applyTcpBuffers } from '../policy/apply.js';
import type { BufferSize } from '../policy/buffers.js';
import { checkOption } from '../policy/option-registry.js';
import { fdOf } from '../sys/socket.js';
import { listen, type TcpConnection, type TcpServer } from '../tcp/connection.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from '../tcp/frame.js';
import { formatReader, type ReaderSpec } from '../tcp/reader.js';
import type { Emit, TcpSinkResult } from './end-events.js';
import { type FarEndLimits, farEndFromEnv } from './far-end-limits.js';
import { type Hello, HelloDetector, secretMatches } from './hello.js';
import { encodeTrailer, PatternSource, PatternVerifier } from './pattern.js';
import { pump } from './pump.js';
import { type Conn, connectionLine, intervalLine } from './tcp-sink-lines.js';

/** What startTcpSink takes: where it listens, its reader and buffers, and what it does with the bytes. */
export interface TcpSinkOptions {
  host: string;
  port: number;
  reader: ReaderSpec;
  rcvbuf?: BufferSize;
  sndbuf?: BufferSize;
  /** Every accepted socket's writableHighWaterMark (echo and reverse writers wait for 'drain'). */
  writableHighWaterMark?: number;
  verify: boolean;
  /** Answer every frame with the same frame (a hello first is optional); `frames` counts them. */
  echo?: boolean;
  /** Stop after the first test's connections (all streams of one blast) have ended. */
  once: boolean;
  intervalSeconds: number;
  maxFrame?: number;
  /**
   * Set when `serve` started this sink: no plain streams, the hello carries the secret, caps hold.
   * `'env'`: the limits `serve` put in this process's environment, if it did (the CLI's sink).
   */
  farEnd?: FarEndLimits | 'env';
}

type StartedOptions = Omit<TcpSinkOptions, 'farEnd'> & { farEnd?: FarEndLimits };

/** A far end waits this long for a connection's hello before closing it. */
const HELLO_SECONDS = 10;

/** A TCP receiving end (`sockbuf sink tcp`): counts, verifies or echoes what each connection sends. */
export class TcpSink {
  readonly done: Promise<TcpSinkResult>;
  private finish!: (r: TcpSinkResult) => void;
  private readonly conns = new Set<Conn>();
  private nextId = 1;
  private firstTest: string | undefined;
  private firstTestEnded = 0;
  private stopping = false;
  private timer: NodeJS.Timeout;
  private started: number | undefined;
  private readonly cpu0 = process.cpuUsage(); // cpuSeconds count from ready, as sink udp's do
  private ended: number | undefined;
  private totals = {
    connections: 0,
    bytes: 0,
    sentBytes: 0,
    frames: 0,
    mismatches: 0,
    errors: 0,
    refused: 0,
    unverified: 0,
    interrupted: 0,
  };
  private last = performance.now();
  /** Far end: bytes either way still allowed (shared by every connection), and the test's streams. */
  private readonly budget = { left: Number.POSITIVE_INFINITY };
  private streams = 0;
  private stopped: string | undefined;
  /** Why the sink was stopped at once (stop(reason)), if it was. */
  private interrupted: string | undefined;
  private farTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly server: TcpServer,
    private readonly opts: StartedOptions,
    private readonly emit: Emit,
  ) {
    this.done = new Promise((r) => {
      this.finish = r;
    });
    this.timer = setInterval(() => this.interval(), opts.intervalSeconds * 1000);
    this.timer.unref();
    const far = opts.farEnd;
    if (far) {
      this.budget.left = far.maxBytes;
      this.farTimer = setTimeout(
        () => this.cut(`seconds: the test ran past ${far.maxSeconds} s`),
        far.maxSeconds * 1000,
      );
      this.farTimer.unref();
    }
  }

  /** Listens (what startTcpSink does): resolves once listening; `emit` gets the sink's JSON lines. */
  static async start(given: TcpSinkOptions, emit: Emit): Promise<TcpSink> {
    const opts = { ...given, farEnd: given.farEnd === 'env' ? farEndFromEnv() : given.farEnd };
    // an echoing sink answers frames instead of checking them
    if (opts.echo && opts.verify) throw UsageError.conflict('echo', 'verify');
    if (opts.writableHighWaterMark !== undefined)
      checkOption('writeHwm', opts.writableHighWaterMark, 'writableHighWaterMark');
    let sink: TcpSink | undefined;
    const server = await listen(
      {
        host: opts.host,
        port: opts.port,
        reader: opts.reader,
        rcvbuf: opts.rcvbuf,
        sndbuf: opts.sndbuf,
        writableHighWaterMark: opts.writableHighWaterMark,
      },
      (conn) => sink?.accept(conn),
    );
    sink = new TcpSink(server, opts, emit);
    return sink;
  }

  private accept(conn: TcpConnection): void {
    if (this.stopping) {
      conn.socket.destroy();
      return;
    }
    const { remoteAddress: host, remotePort: port } = conn.socket;
    const from = host === undefined || port === undefined ? undefined : { host, port };
    const c: Conn = { id: this.nextId++, conn, from, sent: 0, lastBytes: 0, lastReads: 0, lastWritten: 0 };
    this.conns.add(c);
    conn.closed.then(() => this.close(c));
    const far = this.opts.farEnd;
    let helloTimer: NodeJS.Timeout | undefined;
    if (far) {
      helloTimer = setTimeout(
        () => this.refuse(c, `no hello within ${HELLO_SECONDS} s`),
        HELLO_SECONDS * 1000,
      );
      helloTimer.unref();
      conn.closed.then(() => clearTimeout(helloTimer));
    } else {
      this.started ??= performance.now();
      conn.sample(); // the first interval's limited % counts from here
    }
    const detector = new HelloDetector();
    c.detector = detector;
    conn.onData = (chunk) => {
      const d = detector.push(chunk);
      if (d.kind === 'more') return;
      c.detector = undefined;
      clearTimeout(helloTimer);
      if (d.kind === 'hello') {
        const why = this.admit(d.hello);
        if (why) return this.refuse(c, why);
        c.hello = d.hello;
        this.firstTest ??= d.hello.test;
        if (far) {
          this.started ??= performance.now();
          conn.sample();
          this.take(chunk.length);
        }
        if (this.opts.echo) this.echo(c, d.rest);
        else this.begin(c, d.rest);
      } else if (d.kind === 'plain' && far) this.refuse(c, 'not a sockbuf hello');
      else if (d.kind === 'plain' && this.opts.echo) {
        // bench ping without a hello: the bytes are frames to echo
        this.echo(c, d.held);
        c.conn.onData(chunk);
      } else if (d.kind === 'plain') this.plain(c);
      else if (far) this.refuse(c, d.reason);
      else throw new PeerError(`the first bytes are sockbuf's, but ${d.reason}`);
    };
  }

  /** Whether a hello may start (undefined) or why not. A far end checks the secret first of all. */
  private admit(h: Hello): string | undefined {
    const far = this.opts.farEnd;
    if (!far) return undefined;
    if (h.secret === undefined || !secretMatches(far.secret, h.secret))
      return 'the hello lacks the test secret';
    if (this.firstTest !== undefined && h.test !== this.firstTest) return 'a second test on a far end';
    if (this.streams >= far.maxStreams) return `more than ${far.maxStreams} streams`;
    if (h.size > far.maxFrame)
      return `frame size ${h.size} is more than this server allows (${far.maxFrame})`;
    this.streams++;
    return undefined;
  }

  /** A far end closes what it will not serve at once, sending nothing. */
  private refuse(c: Conn, why: string): void {
    c.refused = why;
    c.conn.onData = () => {};
    c.conn.socket.destroy();
  }

  /** Far end: counts bytes against the shared budget; cuts the test when it is spent. */
  private take(n: number): void {
    this.budget.left -= n;
    if (this.budget.left < 0 && this.opts.farEnd)
      this.cut(`max-bytes: more than ${this.opts.farEnd.maxBytes} bytes either way`);
  }

  /** Far end: a cap was reached. Every connection is closed; the result says why. */
  private cut(reason: string): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.emit('stopped', { reason });
    for (const c of this.conns) c.conn.socket.destroy();
    void this.stop();
  }

  /** Not a sockbuf connection: every byte is counted by the reader, nothing more (nothing verified). */
  private plain(c: Conn): void {
    c.plain = true;
    if (this.opts.verify)
      c.unverified = 'a plain stream (no sockbuf hello): nothing to check its bytes against';
    c.conn.onData = () => {};
  }

  /** Writes every frame back; stops reading while the peer does not read its answers. */
  private echo(c: Conn, rest: Uint8Array): void {
    const socket = c.conn.socket;
    const far = this.opts.farEnd;
    const out: Buffer[] = [];
    let paused = false;
    c.echoed = 0;
    const decoder = new FrameDecoder(
      (p) => {
        out.push(encodeFrame(p));
        return true;
      },
      far?.maxFrame ?? this.opts.maxFrame ?? DEFAULT_MAX_FRAME_BYTES,
    );
    c.decoder = decoder;
    const onData = (chunk: Uint8Array) => {
      decoder.push(chunk);
      if (out.length === 0) return;
      const answer = out.length === 1 ? out[0] : Buffer.concat(out);
      c.echoed = (c.echoed as number) + out.length;
      c.sent += answer.length;
      out.length = 0;
      if (far) this.take(answer.length);
      if (!socket.write(answer) && !paused) {
        paused = true;
        socket.pause();
        socket.once('drain', () => {
          paused = false;
          socket.resume();
        });
      }
    };
    c.conn.onData = far
      ? (chunk) => {
          this.take(chunk.length);
          onData(chunk);
        }
      : onData;
    if (rest.length) onData(rest);
  }

  /** After the hello: count, verify, or (reverse) send. */
  private begin(c: Conn, rest: Uint8Array): void {
    const h = c.hello as Hello;
    this.firstTest ??= h.test;
    const conn = c.conn;
    const far = this.opts.farEnd;
    const count = far ? (chunk: Uint8Array) => this.take(chunk.length) : () => {};
    if (h.reverse) {
      conn.onData = count;
      if (h.sndbuf !== undefined) applyTcpBuffers(fdOf(conn.socket), { sndbuf: h.sndbuf });
      const source = new PatternSource(h.size);
      pump(
        conn.socket,
        source,
        { bytes: h.bytes, seconds: h.bytes === undefined ? h.seconds : undefined, budget: this.budget },
        { bytes: 0 },
      ).then(
        (n) => {
          c.sent = n;
          if (far && this.budget.left <= 0) {
            this.cut(`max-bytes: more than ${far.maxBytes} bytes either way`);
            return;
          }
          const trailer = encodeTrailer(n, n / source.frameBytes);
          c.sent += trailer.length;
          conn.socket.end(trailer);
        },
        () => {}, // the error is the connection's, reported when it closes
      );
      return;
    }
    if (this.opts.verify) {
      const v = new PatternVerifier(h.size);
      const d = new FrameDecoder(
        (p) => {
          v.check(p);
          return true;
        },
        far?.maxFrame ?? this.opts.maxFrame ?? DEFAULT_MAX_FRAME_BYTES,
      );
      c.verifier = v;
      c.decoder = d;
      conn.onData = (chunk) => {
        count(chunk);
        d.push(chunk);
      };
      if (rest.length) d.push(rest);
    } else {
      conn.onData = count;
    }
  }

  /**
   * One line per connection that moved (read or wrote) since the previous interval, then one line
   * counting the idle ones (when there are any): 10 000 idle connections cost one line, not 10 000.
   */
  private interval(): void {
    const now = performance.now();
    const dt = (now - this.last) / 1000;
    this.last = now;
    let idle = 0;
    for (const c of this.conns) {
      const line = intervalLine(c, now, dt);
      if (line) this.emit('interval', line);
      else idle++;
    }
    if (idle) this.emit('interval', { idleConnections: idle, intervalSeconds: dt });
  }

  private close(c: Conn): void {
    this.conns.delete(c);
    const far = this.opts.farEnd;
    if (c.detector) {
      // ended before the first bytes decided: a short plain stream, or (far end) nothing it takes
      const d = c.detector.end();
      c.detector = undefined;
      if (far) c.refused ??= 'the connection closed before a hello';
      else if (d.kind === 'plain' && !this.opts.echo) this.plain(c);
    }
    if (c.refused) {
      this.totals.refused++;
      this.emit('refused', { conn: c.id, reason: c.refused });
      if (this.stopping && this.conns.size === 0) this.end();
      return;
    }
    const now = performance.now();
    this.ended = now;
    const seconds = (now - c.conn.openedAt) / 1000;
    const { line, error } = connectionLine(c, seconds, this.opts.echo === true);
    const t = this.totals;
    t.connections++;
    t.bytes += line.bytes;
    t.sentBytes += c.sent;
    t.frames += c.verifier?.frames ?? c.echoed ?? 0;
    t.mismatches += c.verifier?.mismatches ?? 0;
    if (c.unverified) t.unverified++;
    if (error) t.errors++;
    if (c.interrupted !== undefined && !error) t.interrupted++;
    this.emit('connection', line);
    if (this.opts.once && c.hello && c.hello.test === this.firstTest) {
      this.firstTestEnded++;
      if (this.firstTestEnded >= c.hello.streams) void this.stop();
    } else if (this.opts.once && !c.hello && this.firstTest === undefined) {
      void this.stop();
    }
    if (this.stopping && this.conns.size === 0) this.end();
  }

  /**
   * Stops accepting; resolves `done` once the connections in progress have ended. With `now` (why:
   * `SIGINT`, `SIGTERM` …) they are closed at once instead: each is reported with what it had and
   * `interrupted`, and so is the result.
   */
  async stop(now?: string): Promise<TcpSinkResult> {
    if (now !== undefined && this.interrupted === undefined) {
      this.interrupted = now;
      for (const c of this.conns) {
        c.interrupted = now;
        c.conn.socket.destroy();
      }
    }
    if (!this.stopping) {
      this.stopping = true;
      void this.server.close();
      if (this.conns.size === 0) this.end();
    }
    return this.done;
  }

  private end(): void {
    clearInterval(this.timer);
    clearTimeout(this.farTimer);
    const seconds =
      this.started !== undefined && this.ended !== undefined ? (this.ended - this.started) / 1000 : 0;
    const t = this.totals;
    const cpu = process.cpuUsage(this.cpu0);
    this.finish({
      reader: formatReader(this.opts.reader),
      connections: t.connections,
      bytes: t.bytes,
      sentBytes: t.sentBytes,
      seconds,
      bytesPerSecond: seconds > 0 ? (t.bytes + t.sentBytes) / seconds : 0,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      ...(this.opts.verify ? { frames: t.frames, mismatches: t.mismatches, unverified: t.unverified } : {}),
      ...(this.opts.echo ? { frames: t.frames } : {}),
      errors: t.errors,
      ...(this.opts.farEnd ? { refused: t.refused } : {}),
      ...(this.stopped ? { stopped: this.stopped } : {}),
      ...(this.interrupted === undefined
        ? {}
        : { interrupted: this.interrupted, interruptedConnections: t.interrupted }),
    });
  }
}

/** Starts a TCP sink (`sockbuf sink tcp`): listening once this resolves; `emit` gets its JSON lines. */
export function startTcpSink(opts: TcpSinkOptions, emit: Emit): Promise<TcpSink> {
  return TcpSink.start(opts, emit);
}
