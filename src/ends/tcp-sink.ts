// The receiving side of a TCP test, `sockbuf sink tcp`: accepts, reads every connection through its
// reader, and reports per connection. Each connection starts with blast's hello (src/ends/hello.ts);
// after it the bytes are counted, and with `verify` decoded as frames and checked against the pattern.
// A hello asking for reverse makes the sink send the pattern instead. With `echo` (the far end of
// bench ping) there is no hello: every frame read is written back as it is.
import { applyTcpBuffers } from '../policy/apply.js';
import type { BufferSize } from '../policy/buffers.js';
import { fdOf } from '../sys/socket.js';
import { listen, type TcpConnection, type TcpServer } from '../tcp/connection.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from '../tcp/frame.js';
import { formatReader, type ReaderSpec } from '../tcp/reader.js';
import { HELLO_MAX_BYTES, type Hello, parseHello } from './hello.js';
import { PatternSource, PatternVerifier } from './pattern.js';
import { type Emit, pump } from './tcp-source.js';

export interface SinkOptions {
  host: string;
  port: number;
  reader: ReaderSpec;
  rcvbuf?: BufferSize;
  sndbuf?: BufferSize;
  verify: boolean;
  /** Answer every frame with the same frame (no hello); `frames` counts them. */
  echo?: boolean;
  /** Stop after the first test's connections (all streams of one blast) have ended. */
  once: boolean;
  intervalSeconds: number;
  maxFrame?: number;
}

interface Conn {
  id: number;
  conn: TcpConnection;
  hello?: Hello;
  verifier?: PatternVerifier;
  decoder?: FrameDecoder;
  /** Frames echoed (echo only). */
  echoed?: number;
  sent: number;
  lastBytes: number;
  lastReads: number;
  /** socket.bytesWritten at the previous interval (echo and reverse connections move by writing). */
  lastWritten: number;
}

export class Sink {
  readonly done: Promise<Record<string, unknown>>;
  private finish!: (r: Record<string, unknown>) => void;
  private readonly conns = new Set<Conn>();
  private nextId = 1;
  private firstTest: string | undefined;
  private firstTestEnded = 0;
  private stopping = false;
  private timer: NodeJS.Timeout;
  private started: number | undefined;
  private ended: number | undefined;
  private totals = { connections: 0, bytes: 0, sentBytes: 0, frames: 0, mismatches: 0, errors: 0 };
  private last = performance.now();

  private constructor(
    readonly server: TcpServer,
    private readonly opts: SinkOptions,
    private readonly emit: Emit,
  ) {
    this.done = new Promise((r) => {
      this.finish = r;
    });
    this.timer = setInterval(() => this.interval(), opts.intervalSeconds * 1000);
    this.timer.unref();
  }

  static async start(opts: SinkOptions, emit: Emit): Promise<Sink> {
    let sink: Sink | undefined;
    const server = await listen(
      { host: opts.host, port: opts.port, reader: opts.reader, rcvbuf: opts.rcvbuf, sndbuf: opts.sndbuf },
      (conn) => sink?.accept(conn),
    );
    sink = new Sink(server, opts, emit);
    return sink;
  }

  private accept(conn: TcpConnection): void {
    if (this.stopping) {
      conn.socket.destroy();
      return;
    }
    this.started ??= performance.now();
    const c: Conn = { id: this.nextId++, conn, sent: 0, lastBytes: 0, lastReads: 0, lastWritten: 0 };
    conn.sample(); // the first interval's limited % counts from here
    this.conns.add(c);
    conn.closed.then(() => this.close(c));
    if (this.opts.echo) {
      this.echo(c);
      return;
    }
    const hello = new FrameDecoder((payload) => {
      c.hello = parseHello(payload);
      return false;
    }, HELLO_MAX_BYTES);
    conn.onData = (chunk) => {
      const used = hello.push(chunk);
      if (c.hello) this.begin(c, chunk.subarray(used));
    };
  }

  /** Writes every frame back; stops reading while the peer does not read its answers. */
  private echo(c: Conn): void {
    const socket = c.conn.socket;
    const out: Buffer[] = [];
    let paused = false;
    c.echoed = 0;
    c.decoder = new FrameDecoder((p) => {
      out.push(encodeFrame(p));
      return true;
    }, this.opts.maxFrame ?? DEFAULT_MAX_FRAME_BYTES);
    c.conn.onData = (chunk) => {
      (c.decoder as FrameDecoder).push(chunk);
      if (out.length === 0) return;
      const answer = out.length === 1 ? out[0] : Buffer.concat(out);
      c.echoed = (c.echoed as number) + out.length;
      c.sent += answer.length;
      out.length = 0;
      if (!socket.write(answer) && !paused) {
        paused = true;
        socket.pause();
        socket.once('drain', () => {
          paused = false;
          socket.resume();
        });
      }
    };
  }

  /** After the hello: count, verify, or (reverse) send. */
  private begin(c: Conn, rest: Uint8Array): void {
    const h = c.hello as Hello;
    this.firstTest ??= h.test;
    const conn = c.conn;
    if (h.reverse) {
      conn.onData = () => {};
      if (h.sndbuf !== undefined) applyTcpBuffers(fdOf(conn.socket), { sndbuf: h.sndbuf });
      pump(conn.socket, new PatternSource(h.size), {
        bytes: h.bytes,
        seconds: h.bytes === undefined ? h.seconds : undefined,
      }).then(
        (n) => {
          c.sent = n;
          conn.socket.end();
        },
        () => {}, // the error is the connection's, reported when it closes
      );
      return;
    }
    if (this.opts.verify) {
      const v = new PatternVerifier();
      const d = new FrameDecoder((p) => {
        v.check(p);
        return true;
      }, this.opts.maxFrame ?? DEFAULT_MAX_FRAME_BYTES);
      c.verifier = v;
      c.decoder = d;
      conn.onData = (chunk) => {
        d.push(chunk);
      };
      if (rest.length) d.push(rest);
    } else {
      conn.onData = () => {};
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
      const r = c.conn.reader;
      const bytes = r.bytes - c.lastBytes;
      const reads = r.reads - c.lastReads;
      const written = c.conn.socket.bytesWritten - c.lastWritten;
      c.lastBytes = r.bytes;
      c.lastReads = r.reads;
      c.lastWritten += written;
      if (bytes === 0 && reads === 0 && written === 0) {
        idle++;
        continue;
      }
      const st = c.conn.intervalStats();
      this.emit('interval', {
        conn: c.id,
        stream: c.hello?.stream,
        seconds: (now - c.conn.openedAt) / 1000,
        intervalSeconds: dt,
        bytes,
        bytesPerSecond: bytes / dt,
        reads,
        meanReadBytes: reads ? bytes / reads : 0,
        readerSizeBytes: st.reader.sizeBytes,
        ...(c.verifier ? { mismatches: c.verifier.mismatches } : {}),
        ...st,
      });
    }
    if (idle) this.emit('interval', { idleConnections: idle, intervalSeconds: dt });
  }

  private close(c: Conn): void {
    this.conns.delete(c);
    const now = performance.now();
    this.ended = now;
    const seconds = (now - c.conn.openedAt) / 1000;
    const st = c.conn.stats();
    const r = st.reader;
    let error = c.conn.error?.message;
    if (!error && c.decoder?.partial) error = 'the stream ended in the middle of a frame';
    if (!error && !c.hello && !this.opts.echo) error = 'the connection closed before a hello';
    const line: Record<string, unknown> = {
      conn: c.id,
      test: c.hello?.test,
      stream: c.hello?.stream,
      reverse: c.hello?.reverse ?? false,
      bytes: r.bytes,
      sentBytes: c.sent,
      seconds,
      bytesPerSecond: (c.hello?.reverse ? c.sent : r.bytes) / seconds,
      reads: r.reads,
      meanReadBytes: r.meanReadBytes,
      ...(c.verifier ? { frames: c.verifier.frames, mismatches: c.verifier.mismatches } : {}),
      ...(c.echoed !== undefined ? { frames: c.echoed } : {}),
      ...(error ? { error } : {}),
      ...st,
    };
    this.totals.connections++;
    this.totals.bytes += r.bytes;
    this.totals.sentBytes += c.sent;
    this.totals.frames += c.verifier?.frames ?? c.echoed ?? 0;
    this.totals.mismatches += c.verifier?.mismatches ?? 0;
    if (error) this.totals.errors++;
    this.emit('connection', line);
    if (this.opts.once && c.hello && c.hello.test === this.firstTest) {
      this.firstTestEnded++;
      if (this.firstTestEnded >= c.hello.streams) void this.stop();
    } else if (this.opts.once && !c.hello && this.firstTest === undefined) {
      void this.stop();
    }
    if (this.stopping && this.conns.size === 0) this.end();
  }

  /** Stops accepting; resolves `done` once the connections in progress have ended. */
  async stop(): Promise<Record<string, unknown>> {
    if (!this.stopping) {
      this.stopping = true;
      void this.server.close();
      if (this.conns.size === 0) this.end();
    }
    return this.done;
  }

  private end(): void {
    clearInterval(this.timer);
    const seconds =
      this.started !== undefined && this.ended !== undefined ? (this.ended - this.started) / 1000 : 0;
    const t = this.totals;
    this.finish({
      reader: formatReader(this.opts.reader),
      connections: t.connections,
      bytes: t.bytes,
      sentBytes: t.sentBytes,
      seconds,
      bytesPerSecond: seconds > 0 ? (t.bytes + t.sentBytes) / seconds : 0,
      ...(this.opts.verify ? { frames: t.frames, mismatches: t.mismatches } : {}),
      ...(this.opts.echo ? { frames: t.frames } : {}),
      errors: t.errors,
    });
  }
}
