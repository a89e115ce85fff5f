// The sending side of a TCP test: writes blast's verifiable framed stream (src/ends/pattern.ts) as
// fast as the socket takes it, for a number of bytes or for a time, ending on a frame boundary.
// `runTcpBlast` is `sockbuf blast tcp`: N streams, each starting with a hello and ending with a trailer
// (the wire format: hello.ts), optionally reversed (then what arrives is verified); or, with `raw`,
// plain zeros for any receiver.

import { randomUUID } from 'node:crypto';
import { EnvironmentError, UsageError } from '../errors.js';
import type { BufferSize } from '../policy/buffers.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { connect, type TcpConnection } from '../tcp/connection.js';
import { DEFAULT_MAX_FRAME_BYTES, FrameDecoder } from '../tcp/frame.js';
import type { ReaderSpec } from '../tcp/reader.js';
import type { Emit, TcpBlastResult } from './end-events.js';
import { encodeHello, FRAME_INDEX_BYTES } from './hello.js';
import { limitedShare, streamSummary } from './iperf3/summary.js';
import { encodeTrailer, PatternSource, PatternVerifier } from './pattern.js';
import { errorCode, fromPeer, peerFailure, peerFailureText, refusedHello } from './peer-failure.js';
import { pump, ZeroSource } from './pump.js';

/** What runTcpBlast takes: the sink, the amount or duration, the message size, streams and direction. */
export interface TcpBlastOptions {
  host: string;
  port: number;
  /** Total stream bytes over all streams; or `seconds`. Neither: 10 s. */
  bytes?: number;
  seconds?: number;
  /** Frame payload bytes. */
  size: number;
  sndbuf?: BufferSize;
  /** Each stream's writableHighWaterMark (the writer waits for 'drain'); default Node's 16 KiB. */
  writableHighWaterMark?: number;
  parallel: number;
  reverse: boolean;
  intervalSeconds: number;
  /** How the blast reads in reverse mode. */
  reader?: ReaderSpec;
  /** Zeros with no hello and no framing, for any receiver (not with `reverse`). */
  raw?: boolean;
  /** The far end's secret (a `serve` test's), carried in the hello. */
  secret?: string;
  /** Aborting closes every stream: the run rejects at once (the exporter's probe cap). */
  signal?: AbortSignal;
  /**
   * Aborting closes every stream and resolves with what was sent and received so far, marked
   * `interrupted` (its reason: `SIGINT` …): the CLI's way to end on a signal.
   */
  stop?: AbortSignal;
  /**
   * A run for a number of bytes ends when the receiver has taken nothing for this long (default 10 s,
   * OPTIONS.stallTimeout): nothing acknowledged or, in reverse, nothing received, connecting included; the
   * result says so (`stalled`). A run for a duration has its grace instead.
   */
  stallSeconds?: number;
}

/**
 * A run for a duration ends this long after it whatever the peer does: a receiver that never accepts,
 * stops reading or never closes has its streams closed then, and the result says so (`stalled`).
 * Connecting counts against the same deadline.
 */
export const GRACE_SECONDS = 2;

/** What a stream has moved: bytes the peer acknowledged and bytes received (the kernel's count), else ours. */
function moved(s: Stream): number {
  const st = s.conn.socketStats();
  return (st?.bytesAcked ?? s.bytes) + (st?.bytesReceived ?? s.conn.reader.bytes);
}

/** Why a run ended before its end: a stop, a stall, or the sink's failure (said with its context). */
type CutShort = { interrupted: string } | { stalled: string } | { failed: string };

interface Stream {
  index: number;
  conn: TcpConnection;
  bytes: number;
  lastBytes: number;
  /** Reverse: what arrives is checked against the pattern and the trailer. */
  verifier?: PatternVerifier;
  decoder?: FrameDecoder;
}

function streamBytes(s: Stream, reverse: boolean): number {
  return reverse ? s.conn.reader.bytes : s.bytes;
}

/** What every stream of a test connects with. */
export type StreamTarget = Pick<
  TcpBlastOptions,
  'host' | 'port' | 'sndbuf' | 'writableHighWaterMark' | 'reader' | 'parallel' | 'reverse'
>;

/**
 * Connects `parallel` streams one after another, each reading from the start (reverse counts what
 * arrives, conn.reader.bytes; forward sees the FIN). `sndbuf` is the sender's: a reverse stream
 * leaves its own alone. `opened` runs on each as it connects (a cookie to write, a first sample).
 * When one fails, the streams already open are destroyed.
 */
export async function openStreams(
  o: StreamTarget,
  opened: (conn: TcpConnection, index: number) => void = () => {},
  /** When connecting must be over (performance.now() ms): each connect times out there. */
  deadline = Number.POSITIVE_INFINITY,
): Promise<TcpConnection[]> {
  const conns: TcpConnection[] = [];
  try {
    for (let i = 0; i < o.parallel; i++) {
      const left = (deadline - performance.now()) / 1000;
      const conn = await connect({
        host: o.host,
        port: o.port,
        sndbuf: o.reverse ? undefined : o.sndbuf,
        writableHighWaterMark: o.writableHighWaterMark,
        reader: o.reader,
        onData: () => {},
        ...(Number.isFinite(left) ? { timeoutSeconds: Math.max(0.001, left) } : {}),
      });
      conns.push(conn);
      opened(conn, i);
    }
  } catch (e) {
    for (const c of conns) c.socket.destroy();
    // a refused or unanswered connect: said with the sink's role and the likely cause
    const code = errorCode(e);
    throw code === undefined
      ? e
      : peerFailure(e, {
          peer: 'sink',
          at: { host: o.host, port: o.port },
          doing: 'connecting to',
          said: code,
        });
  }
  return conns;
}

/** Stream `index`'s hello: the test, its shape, and (reverse) what the sink sends and with what sndbuf. */
function streamHello(
  opts: TcpBlastOptions,
  test: string,
  index: number,
  perStream: number | undefined,
  seconds: number | undefined,
): Uint8Array {
  const sndbuf = opts.sndbuf !== undefined && opts.sndbuf !== 'auto' ? Number(opts.sndbuf) : undefined;
  return encodeHello({
    sockbuf: 1,
    test,
    stream: index,
    streams: opts.parallel,
    reverse: opts.reverse,
    size: opts.size,
    bytes: opts.reverse ? perStream : undefined,
    seconds: opts.reverse ? seconds : undefined,
    sndbuf: opts.reverse ? sndbuf : undefined,
    ...(opts.secret === undefined ? {} : { secret: opts.secret }),
  });
}

/** Why a stream failed, said with its context (peer-failure.ts); undefined when not the peer's doing. */
function peerFailed(
  err: unknown,
  opts: TcpBlastOptions,
  streams: Stream[],
  started: number,
): string | undefined {
  if (!fromPeer(err)) return undefined;
  const seconds = (performance.now() - started) / 1000;
  const bytes = streams.reduce((a, s) => a + streamBytes(s, opts.reverse), 0);
  const noSecret = opts.secret === undefined && !opts.raw;
  const cause = refusedHello(noSecret, seconds, bytes);
  const doing = opts.reverse ? 'receiving from' : 'sending to';
  const moved = { bytes, seconds, streams: streams.length };
  return peerFailureText(err as Error, { peer: 'sink', at: opts, doing, moved, ...(cause ? { cause } : {}) });
}

/**
 * `sockbuf blast tcp`: resolves with the result once every stream has ended; `emit` gets the intervals.
 * A sink that resets or closes mid-run also resolves it, with what was moved until then and `failed`
 * (whom, doing what, the likely cause); a refused connect rejects (EnvironmentError).
 */
export async function runTcpBlast(opts: TcpBlastOptions, emit: Emit): Promise<TcpBlastResult> {
  if (!(opts.size >= FRAME_INDEX_BYTES && opts.size <= DEFAULT_MAX_FRAME_BYTES))
    throw UsageError.invalid(
      'size',
      opts.size,
      `${FRAME_INDEX_BYTES} to ${DEFAULT_MAX_FRAME_BYTES}: a frame carries its index`,
    );
  checkWhole('parallel', opts.parallel);
  if (opts.bytes !== undefined && opts.seconds !== undefined) throw UsageError.either('bytes', 'seconds');
  if (opts.bytes !== undefined) checkOption('bytes', opts.bytes);
  if (opts.writableHighWaterMark !== undefined)
    checkOption('writeHwm', opts.writableHighWaterMark, 'writableHighWaterMark');
  // raw zeros carry no hello, so the sink cannot be told to send
  if (opts.raw && opts.reverse) throw UsageError.conflict('raw', 'reverse');
  const seconds =
    opts.bytes === undefined
      ? checkOption('duration', opts.seconds ?? OPTIONS.duration.default, 'seconds')
      : undefined;
  checkOption('interval', opts.intervalSeconds, 'intervalSeconds');
  const test = randomUUID();
  const signal = opts.signal;
  signal?.throwIfAborted();
  // the hard end of a run for a duration: its duration and the grace, counted from here
  const hardEnd =
    seconds === undefined ? Number.POSITIVE_INFINITY : performance.now() + (seconds + GRACE_SECONDS) * 1000;
  // a run for a number of bytes: the receiver must take something every stallSeconds (connecting too)
  const stall =
    seconds === undefined
      ? checkOption('stallTimeout', opts.stallSeconds ?? OPTIONS.stallTimeout.default, 'stallSeconds')
      : undefined;
  let streams: Stream[] = [];
  /** Why the run was cut short (a stop signal, the grace spent, the sink failed): the result says it, with what it had. */
  let cutShort: CutShort | undefined;
  const cut = (why: typeof cutShort) => {
    cutShort ??= why;
    for (const s of streams) s.conn.socket.destroy();
  };
  const onStop = () => cut({ interrupted: String(opts.stop?.reason ?? 'stopped') });
  const hardTimer = Number.isFinite(hardEnd)
    ? setTimeout(
        () =>
          cut({
            stalled: `the receiver had not taken the stream ${GRACE_SECONDS} s after the ${seconds} s duration`,
          }),
        hardEnd - performance.now(),
      )
    : undefined;
  let stallTimer: NodeJS.Timeout | undefined;
  if (stall !== undefined) {
    let last = -1;
    let since = performance.now();
    stallTimer = setInterval(
      () => {
        const now = performance.now();
        const m = streams.reduce((a, s) => a + moved(s), 0);
        if (m !== last) [last, since] = [m, now];
        else if (now - since >= stall * 1000)
          cut({
            stalled: streams.length
              ? `the receiver took nothing for ${stall} s`
              : `no connection within ${stall} s`,
          });
      },
      Math.min(1000, (stall * 1000) / 4),
    );
  }
  if (opts.stop?.aborted) onStop();
  opts.stop?.addEventListener('abort', onStop, { once: true });
  // the first interval's limited % counts from each stream's connect
  const connectBy = stall === undefined ? hardEnd : performance.now() + stall * 1000;
  let conns: TcpConnection[];
  try {
    conns = await openStreams(
      opts,
      (conn) => {
        signal?.throwIfAborted(); // openStreams closes what it opened
        if (cutShort) throw new DOMException('cut short by the deadline', 'TimeoutError'); // likewise
        conn.sample();
      },
      connectBy,
    );
  } catch (err) {
    clearTimeout(hardTimer);
    clearInterval(stallTimer);
    opts.stop?.removeEventListener('abort', onStop);
    signal?.throwIfAborted();
    // a connect cut by the deadline (ETIMEDOUT) or a stop before every stream was open
    if (cutShort || (err instanceof EnvironmentError && performance.now() >= connectBy - 1))
      return {
        ...(cutShort ?? {
          stalled:
            stall === undefined
              ? `no connection within the ${seconds} s duration and its ${GRACE_SECONDS} s grace`
              : `no connection within ${stall} s`,
        }),
        reverse: opts.reverse,
        streams: opts.parallel,
        size: opts.size,
        bytes: 0,
        seconds: 0,
        bytesPerSecond: 0,
        perStream: [],
      };
    throw err;
  }
  streams = conns.map((conn, index) => ({ index, conn, bytes: 0, lastBytes: 0 }));
  if (cutShort) cut(cutShort);
  // each stream's pump or close wait rejects once its socket is gone
  const abort = () => {
    for (const s of streams) s.conn.socket.destroy();
  };
  signal?.addEventListener('abort', abort, { once: true });
  const perStream = opts.bytes === undefined ? undefined : Math.ceil(opts.bytes / opts.parallel);
  const started = performance.now();
  const cpu0 = process.cpuUsage(); // cpuSeconds count from the streams' start, to the result
  let last = started;
  const timer = setInterval(() => {
    const now = performance.now();
    const dt = (now - last) / 1000;
    let bytes = 0;
    const per = streams.map((s) => {
      const b = streamBytes(s, opts.reverse);
      const d = b - s.lastBytes;
      s.lastBytes = b;
      bytes += d;
      return { stream: s.index, bytes: d, bytesPerSecond: d / dt, ...s.conn.intervalStats() };
    });
    last = now;
    emit('interval', {
      seconds: (now - started) / 1000,
      intervalSeconds: dt,
      bytes,
      bytesPerSecond: bytes / dt,
      streams: per,
    });
  }, opts.intervalSeconds * 1000);
  timer.unref();
  try {
    await Promise.all(
      streams.map(async (s) => {
        const sock = s.conn.socket;
        if (opts.raw) {
          s.bytes = await pump(sock, new ZeroSource(), { bytes: perStream, seconds }, s);
          sock.end();
          const err = await s.conn.closed;
          if (err) throw err;
          return;
        }
        if (opts.reverse) {
          const v = new PatternVerifier(opts.size);
          const d = new FrameDecoder((p) => {
            v.check(p);
            return true;
          });
          s.verifier = v;
          s.decoder = d;
          s.conn.onData = (chunk) => {
            d.push(chunk);
          };
        }
        sock.write(streamHello(opts, test, s.index, perStream, seconds));
        if (!opts.reverse) {
          const source = new PatternSource(opts.size);
          s.bytes = await pump(sock, source, { bytes: perStream, seconds }, s);
          sock.end(encodeTrailer(s.bytes, source.frames));
        }
        // the transfer ends when the sink has read everything and closed its side
        const err = await s.conn.closed;
        if (err) throw err;
      }),
    ).catch((err) => {
      // cut short by us: the streams' errors are the cut's; the result says what it had
      if (cutShort) return;
      // the sink's failure (a reset, a close, a refusal): the result says it, with what was moved until then
      const failed = peerFailed(err, opts, streams, started);
      if (failed === undefined) throw err;
      cut({ failed });
    });
  } finally {
    clearInterval(timer);
    clearTimeout(hardTimer);
    clearInterval(stallTimer);
    opts.stop?.removeEventListener('abort', onStop);
    signal?.removeEventListener('abort', abort);
    abort();
  }
  signal?.throwIfAborted();
  return blastResult(opts, streams, cutShort, started, cpu0);
}

/** The result of a run: what each stream moved and, reversed, what the verifier found. */
function blastResult(
  opts: TcpBlastOptions,
  streams: Stream[],
  cutShort: CutShort | undefined,
  started: number,
  cpu0: NodeJS.CpuUsage,
): TcpBlastResult {
  const secs = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const per = streams.map((s) => {
    const v = s.verifier;
    const error = v && (s.decoder?.partial ? 'the stream ended in the middle of a frame' : v.finish());
    return {
      stream: s.index,
      bytes: streamBytes(s, opts.reverse),
      ...(v ? { frames: v.frames, mismatches: v.mismatches } : {}),
      ...(error ? { error } : {}),
      ...streamSummary(s.conn),
    };
  });
  const bytes = per.reduce((a, s) => a + s.bytes, 0);
  const verified = opts.reverse
    ? {
        frames: per.reduce((a, s) => a + (s.frames ?? 0), 0),
        mismatches: per.reduce((a, s) => a + (s.mismatches ?? 0), 0),
        errors: per.filter((s) => s.error).length,
      }
    : {};
  return {
    ...(opts.raw ? { raw: true } : {}),
    ...cutShort,
    ...verified,
    reverse: opts.reverse,
    streams: opts.parallel,
    size: opts.size,
    bytes,
    seconds: secs,
    bytesPerSecond: bytes / secs,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...limitedShare(per),
    perStream: per,
  };
}
