// `sockbuf blast tcp --iperf3`: a TCP test against a stock `iperf3 -s`, run as iperf3's own client
// runs it (iperf_client_api.c): cookie, parameters, N data connections, TEST_END after the time,
// results exchanged. What it adds to iperf3's figures is its own end's view: bytes per interval, and
// from TCP_INFO the rwnd-limited and sndbuf-limited share, cwnd, RTT, window scale and whether the
// buffer was pinned.

import { EnvironmentError, PeerError, UsageError } from '../../errors.js';
import type { BufferSize } from '../../policy/buffers.js';
import { checkWhole } from '../../policy/option-registry.js';
import { tcpCongestion } from '../../sys/socket.js';
import { connect, type TcpConnection } from '../../tcp/connection.js';
import type { ReaderSpec } from '../../tcp/reader.js';
import type { Emit, Iperf3BlastResult } from '../end-events.js';
import { pump, ZeroSource } from '../pump.js';
import { openStreams } from '../tcp-source.js';
import { ControlChannel, waitAcked } from './control.js';
import {
  COOKIE_BYTES,
  cpuUtil,
  describeServerError,
  makeCookie,
  paramsDocument,
  readResults,
  resultsDocument,
  State,
  streamId,
} from './protocol.js';
import { limitedShare, streamSummary } from './summary.js';

/** What runIperf3Blast takes: the iperf3 server, the test's length, size, streams and direction. */
export interface Iperf3BlastOptions {
  host: string;
  port: number;
  /** Whole seconds are sent to the server (rounded up); this end stops after exactly this long. */
  seconds: number;
  parallel: number;
  /** Bytes per write (iperf3's -l). */
  size: number;
  reverse: boolean;
  /** Forward: this end's send buffer ('auto' or a size to pin). Reverse: sent as iperf3's -w. */
  sndbuf?: BufferSize;
  intervalSeconds: number;
  reader?: ReaderSpec;
  /** Seconds the server has to answer the cookie (default 10): past it, this is no iperf3 server. */
  answerSeconds?: number;
  /** Aborting closes every connection of the test: the run rejects at once (the exporter's probe cap). */
  signal?: AbortSignal;
}

/** The largest write iperf3 itself allows for TCP (MAX_BLOCKSIZE, its -l). */
const IPERF3_MAX_LEN = 1024 * 1024;

/** How long the server has to answer the cookie. */
const FIRST_ANSWER_SECONDS = 10;
/** How long this end waits for the data connections to close after the test. */
const CLOSE_WAIT_MS = 2000;

async function expect(ctrl: ControlChannel, want: number, where: string): Promise<void> {
  const s = await ctrl.state();
  if (s === want) return;
  if (s === State.ACCESS_DENIED)
    throw new EnvironmentError(`the iperf3 server at ${where} is busy running a test (ACCESS_DENIED)`);
  if (s === State.SERVER_ERROR) {
    const b = await ctrl.read(8);
    throw new EnvironmentError(
      `the iperf3 server at ${where} refused the test: ${describeServerError(b.readInt32BE(0), b.readInt32BE(4))}`,
    );
  }
  throw new PeerError(`the iperf3 server at ${where} sent state ${s} where ${want} was expected`);
}

interface Stream {
  index: number;
  id: number;
  conn: TcpConnection;
  bytes: number;
  lastBytes: number;
}

/**
 * A test ends this long after its duration whatever the server does (one that stops answering, stops
 * reading or never closes): then every connection is closed and the run rejects, saying so.
 */
export const IPERF3_GRACE_SECONDS = 3;

/** Runs one test; resolves with this end's figures and the server's. */
export async function runIperf3Blast(opts: Iperf3BlastOptions, emit: Emit): Promise<Iperf3BlastResult> {
  opts.signal?.throwIfAborted();
  const bound = opts.seconds + IPERF3_GRACE_SECONDS;
  const where = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const ac = new AbortController();
  const forward = () => ac.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', forward, { once: true });
  const late = new EnvironmentError(
    `the iperf3 server at ${where} did not finish the ${opts.seconds} s test within ${bound} s`,
  );
  const timer = setTimeout(() => ac.abort(late), bound * 1000);
  // the bound holds even where no socket is open yet to close (a connect the peer never answers)
  const stopped = new Promise<never>((_, reject) =>
    ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true }),
  );
  stopped.catch(() => {});
  const work = runTest(
    {
      ...opts,
      signal: ac.signal,
      answerSeconds: opts.answerSeconds ?? Math.min(FIRST_ANSWER_SECONDS, bound),
    },
    emit,
  );
  try {
    return await Promise.race([work, stopped]);
  } catch (err) {
    work.catch(() => {}); // settles later, its sockets closed by the abort
    throw ac.signal.aborted ? ac.signal.reason : err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', forward);
  }
}

async function runTest(opts: Iperf3BlastOptions, emit: Emit): Promise<Iperf3BlastResult> {
  if (!(Number.isSafeInteger(opts.size) && opts.size >= 1 && opts.size <= IPERF3_MAX_LEN))
    throw UsageError.invalid('size', opts.size, '1 B to 1M, as iperf3 -l');
  checkWhole('parallel', opts.parallel);
  const where = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  const cookie = makeCookie();
  const pinned = opts.sndbuf !== undefined && opts.sndbuf !== 'auto' ? Number(opts.sndbuf) : undefined;
  const signal = opts.signal;
  signal?.throwIfAborted();
  const ctrlConn = await connect({
    host: opts.host,
    port: opts.port,
    timeoutSeconds: opts.answerSeconds ?? FIRST_ANSWER_SECONDS,
  });
  if (signal?.aborted) ctrlConn.socket.destroy();
  signal?.throwIfAborted();
  const ctrl = new ControlChannel(ctrlConn);
  const streams: Stream[] = [];
  /** While the test sends: emits the interval so far (the last, partial one when stopped). */
  let tick: (() => void) | undefined;
  // every read, write and wait below rejects once its socket is gone
  const abort = () => {
    // stopped while sending: what was counted since the last interval is reported before the sockets go
    if (signal?.aborted) tick?.();
    tick = undefined;
    ctrl.conn.socket.destroy();
    for (const s of streams) s.conn.socket.destroy();
  };
  signal?.addEventListener('abort', abort, { once: true });
  const received = (s: Stream) => s.conn.reader.bytes;
  const count = (s: Stream) => (opts.reverse ? received(s) : s.bytes);
  try {
    ctrl.write(cookie);
    // an iperf3 server answers the cookie at once; anything else (a sockbuf sink, a web server) does not
    await ctrl.read(1, opts.answerSeconds ?? FIRST_ANSWER_SECONDS).then(
      (b) => ctrl.unread(b),
      (e: Error) => {
        throw new EnvironmentError(`no iperf3 server at ${where}: ${e.message}`);
      },
    );
    await expect(ctrl, State.PARAM_EXCHANGE, where);
    ctrl.sendJson(
      paramsDocument({
        seconds: opts.seconds,
        parallel: opts.parallel,
        len: opts.size,
        reverse: opts.reverse,
        window: opts.reverse ? pinned : undefined,
      }),
    );
    await expect(ctrl, State.CREATE_STREAMS, where);
    const conns = await openStreams(opts, (conn) => {
      signal?.throwIfAborted(); // openStreams closes what it opened
      conn.socket.write(cookie);
    });
    signal?.throwIfAborted();
    for (const [i, conn] of conns.entries())
      streams.push({ index: i, id: streamId(i), conn, bytes: 0, lastBytes: 0 });
    await expect(ctrl, State.TEST_START, where);
    await expect(ctrl, State.TEST_RUNNING, where);

    const started = performance.now();
    const cpu0 = process.cpuUsage();
    for (const s of streams) s.conn.sample(); // the first interval's limited % counts from here
    let last = started;
    tick = () => {
      const now = performance.now();
      const dt = (now - last) / 1000;
      last = now;
      let bytes = 0;
      const per = streams.map((s) => {
        const b = count(s);
        const d = b - s.lastBytes;
        s.lastBytes = b;
        bytes += d;
        return { stream: s.index, id: s.id, bytes: d, bytesPerSecond: d / dt, ...s.conn.intervalStats() };
      });
      emit('interval', {
        seconds: (now - started) / 1000,
        intervalSeconds: dt,
        bytes,
        bytesPerSecond: bytes / dt,
        ...limitedShare(per),
        streams: per,
      });
    };
    const timer = setInterval(() => tick?.(), opts.intervalSeconds * 1000);
    timer.unref();
    try {
      if (opts.reverse) await new Promise((r) => setTimeout(r, opts.seconds * 1000));
      else {
        await Promise.all(
          streams.map(async (s) => {
            await pump(s.conn.socket, new ZeroSource(), { seconds: opts.seconds }, s);
          }),
        );
        // what the server counts at TEST_END is what it has read: let the last bytes arrive first
        await Promise.all(streams.map((s) => waitAcked(s.conn, COOKIE_BYTES + s.bytes)));
      }
    } finally {
      clearInterval(timer);
      tick = undefined;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuUtil(process.cpuUsage(cpu0), seconds);
    for (const s of streams) s.conn.socketStats(); // the last look at tcp_info while the test is on
    const congestion = tcpCongestion(streams[0].conn.socket);
    ctrl.sendState(State.TEST_END);
    await expect(ctrl, State.EXCHANGE_RESULTS, where);
    ctrl.sendJson(
      resultsDocument({
        ...cpu,
        senderHasRetransmits: opts.reverse ? -1 : 1,
        congestion,
        streams: streams.map((s) => ({
          id: s.id,
          bytes: count(s),
          retransmits: opts.reverse ? -1 : (s.conn.socketStats()?.totalRetrans ?? 0),
          startSeconds: 0,
          endSeconds: seconds,
        })),
      }),
    );
    const server = readResults(await ctrl.json());
    await expect(ctrl, State.DISPLAY_RESULTS, where);
    ctrl.sendState(State.IPERF_DONE);
    // reverse: what the server had in flight at TEST_END still arrives; count it until it closes
    await Promise.race([
      Promise.all(
        streams.map((s) => {
          if (!opts.reverse) s.conn.socket.end();
          return s.conn.closed;
        }),
      ),
      new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref()),
    ]);
    const bytes = streams.reduce((a, s) => a + count(s), 0);
    const perStream = streams.map((s) => ({
      stream: s.index,
      id: s.id,
      bytes: count(s),
      ...streamSummary(s.conn),
    }));
    const serverBytes = server.streams.reduce((a, s) => a + s.bytes, 0);
    const serverSeconds = Math.max(0, ...server.streams.map((s) => s.endSeconds - s.startSeconds));
    return {
      iperf3: true,
      reverse: opts.reverse,
      streams: opts.parallel,
      size: opts.size,
      bytes,
      seconds,
      bytesPerSecond: bytes / seconds,
      ...limitedShare(perStream),
      ...(congestion ? { congestion } : {}),
      sndbuf: pinned === undefined ? 'auto' : pinned,
      perStream,
      server: {
        host: where,
        bytes: serverBytes,
        seconds: serverSeconds,
        bytesPerSecond: serverSeconds > 0 ? serverBytes / serverSeconds : 0,
        retransmits: server.streams.reduce((a, s) => a + Math.max(0, s.retransmits), 0),
        cpuUtilTotal: server.cpuUtilTotal,
        ...(server.congestion ? { congestion: server.congestion } : {}),
        ...(opts.reverse && pinned !== undefined ? { window: pinned } : {}),
        streams: server.streams.map((s) => ({ id: s.id, bytes: s.bytes, retransmits: s.retransmits })),
      },
    };
  } finally {
    signal?.removeEventListener('abort', abort);
    abort();
  }
}
