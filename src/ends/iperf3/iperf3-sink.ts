// `sockbuf sink tcp --iperf3`: answers a stock `iperf3 -c` as iperf3's own server does
// (iperf_server_api.c): one test at a time (a second cookie gets ACCESS_DENIED), TCP forward, -R and
// -P; -w honoured as iperf3 does it, by pinning SO_RCVBUF and SO_SNDBUF of the accepted data sockets;
// UDP, SCTP and --bidir answered with SERVER_ERROR. Every data connection is read through the sink's
// reader and reported with its tcp_info, buffers and reader figures.

import { PeerError } from '../../errors.js';
import { applyTcpBuffers, markPinned } from '../../policy/apply.js';
import type { BufferSize, TcpBufferReport } from '../../policy/buffers.js';
import { fdOf, tcpCongestion } from '../../sys/socket.js';
import { listen, type TcpConnection, type TcpServer } from '../../tcp/connection.js';
import { formatReader, type ReaderSpec } from '../../tcp/reader.js';
import type { Emit, Iperf3SinkResult } from '../end-events.js';
import { sendBlocks } from './blocks.js';
import { ControlChannel } from './control.js';
import {
  COOKIE_BYTES,
  cpuUtil,
  encodeServerError,
  encodeState,
  IEUNIMP,
  readParams,
  readResults,
  resultsDocument,
  State,
  streamId,
} from './protocol.js';
import { limitedShare, streamSummary } from './summary.js';

/** What an iperf3 sink takes: where it listens, its reader and buffers, and whether it serves one test. */
export interface Iperf3SinkOptions {
  host: string;
  port: number;
  reader: ReaderSpec;
  rcvbuf?: BufferSize;
  sndbuf?: BufferSize;
  /** Stop after the first test (run or refused). */
  once: boolean;
  intervalSeconds: number;
}

/** Seconds a connection has to send its cookie, and a client to open its data connections. */
const COOKIE_SECONDS = 10;
/** Past the test's own time, how long the sink waits for TEST_END and for the last closes. */
const GRACE_SECONDS = 30;
const CLOSE_WAIT_MS = 2000;

interface Data {
  id: number;
  conn: TcpConnection;
  buffers: TcpBufferReport;
  /** Reverse: bytes written. */
  sent: { bytes: number };
  /** What the test's figures leave out: the cookie, and what moved in iperf3's -O seconds. */
  omitted: { received: number; sent: number };
  lastBytes: number;
  lastReads: number;
}

interface Test {
  cookie: Buffer;
  /** Data connections are taken while this is set (CREATE_STREAMS). */
  want?: { parallel: number; ready: () => void };
  data: Data[];
  /** The first stream's congestion control (read while its socket is open). */
  congestion?: string;
  /** When the test began running (TEST_RUNNING), and whether it runs reversed. */
  running?: { at: number; reverse: boolean };
  /** Cut by stop(true) (a signal): counted as interrupted with what it moved, not as an error. */
  interrupted?: boolean;
}

/** The first data stream's congestion control, as iperf3's server reports it. */
const congestionOf = (t: Test) => (t.data[0] ? tcpCongestion(t.data[0].conn.socket) : undefined);
const receivedBytes = (d: Data) => d.conn.reader.bytes - d.omitted.received;
const sentBytes = (d: Data) => d.sent.bytes - d.omitted.sent;

/** A receiving end that stock iperf3 clients test against (`sockbuf sink tcp --iperf3`). */
export class Iperf3Sink {
  readonly done: Promise<Iperf3SinkResult>;
  private finish!: (r: Iperf3SinkResult) => void;
  private test: Test | undefined;
  /** The test in progress (run()), settled when it has ended. */
  private current: Promise<void> | undefined;
  private nextConn = 1;
  private stopping = false;
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  private readonly totals = {
    tests: 0,
    connections: 0,
    bytes: 0,
    sentBytes: 0,
    seconds: 0,
    errors: 0,
    refused: 0,
    interrupted: 0,
  };

  private constructor(
    readonly server: TcpServer,
    private readonly opts: Iperf3SinkOptions,
    private readonly emit: Emit,
  ) {
    this.done = new Promise((r) => {
      this.finish = r;
    });
    this.timer = setInterval(() => this.interval(), opts.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** Listens for iperf3 clients: resolves once listening; `emit` gets the sink's JSON lines. */
  static async start(opts: Iperf3SinkOptions, emit: Emit): Promise<Iperf3Sink> {
    let sink: Iperf3Sink | undefined;
    const server = await listen(
      { host: opts.host, port: opts.port, reader: opts.reader, rcvbuf: opts.rcvbuf, sndbuf: opts.sndbuf },
      (conn) => sink?.accept(conn),
    );
    sink = new Iperf3Sink(server, opts, emit);
    return sink;
  }

  private accept(conn: TcpConnection): void {
    if (this.stopping) return void conn.socket.destroy();
    const id = this.nextConn++;
    ControlChannel.first(conn, COOKIE_BYTES, COOKIE_SECONDS).then(
      ({ head, rest }) => {
        const t = this.test;
        if (!t) {
          this.current = this.run(id, conn, head, rest);
          return;
        }
        if (t.want && head.equals(t.cookie) && t.data.length < t.want.parallel) {
          t.data.push({
            id: streamId(t.data.length),
            conn,
            buffers: conn.buffers,
            sent: { bytes: 0 },
            omitted: { received: COOKIE_BYTES, sent: 0 },
            lastBytes: 0,
            lastReads: 0,
          });
          if (t.data.length === t.want.parallel) t.want.ready();
          return;
        }
        // iperf_accept: one test at a time
        conn.socket.end(encodeState(State.ACCESS_DENIED));
        this.refused(id, 'busy: a test is running (ACCESS_DENIED)');
      },
      () => conn.socket.destroy(),
    );
  }

  private refused(conn: number, reason: string): void {
    this.totals.refused++;
    this.emit('refused', { conn, reason });
  }

  /** One test, from PARAM_EXCHANGE to IPERF_DONE; the connection that sent the first cookie is its control. */
  private async run(id: number, conn: TcpConnection, cookie: Buffer, rest: Buffer): Promise<void> {
    const t: Test = { cookie, data: [] };
    this.test = t;
    const ctrl = new ControlChannel(conn, COOKIE_SECONDS, rest);
    let error: string | undefined;
    try {
      ctrl.sendState(State.PARAM_EXCHANGE);
      const p = readParams(await ctrl.json());
      if (!p.ok) {
        ctrl.write(encodeServerError(IEUNIMP));
        this.refused(id, `SERVER_ERROR: ${p.reason}`);
        this.totals.tests++;
        return;
      }
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(
          () => fail(new PeerError(`not all ${p.parallel} streams came within ${COOKIE_SECONDS} s`)),
          COOKIE_SECONDS * 1000,
        );
        t.want = {
          parallel: p.parallel,
          ready: () => {
            clearTimeout(timer);
            ready();
          },
        };
        conn.closed.then(() => {
          clearTimeout(timer);
          fail(new PeerError('the client closed the control connection'));
        });
        ctrl.sendState(State.CREATE_STREAMS);
      }).finally(() => {
        t.want = undefined;
      });
      // iperf3 -w: both buffers of every data socket pinned, as iperf3's server does
      if (p.window !== undefined)
        for (const d of t.data) {
          d.buffers = applyTcpBuffers(fdOf(d.conn.socket), { rcvbuf: p.window, sndbuf: p.window });
          markPinned(d.conn.socket, d.buffers);
        }
      ctrl.sendState(State.TEST_START);
      ctrl.sendState(State.TEST_RUNNING);
      let started = performance.now();
      t.running = { at: started, reverse: p.reverse };
      let cpu0 = process.cpuUsage();
      // iperf3 -O: the first seconds are left out of the figures, as iperf3's server resets its stats
      const omit =
        p.omit > 0
          ? setTimeout(() => {
              started = performance.now();
              cpu0 = process.cpuUsage();
              for (const d of t.data) d.omitted = { received: d.conn.reader.bytes, sent: d.sent.bytes };
            }, p.omit * 1000)
          : undefined;
      const limit = { stop: false, left: p.bytes ?? Number.POSITIVE_INFINITY };
      for (const d of t.data) {
        d.conn.sample();
        d.lastBytes = d.conn.reader.bytes;
        if (p.reverse) void sendBlocks(d.conn.socket, p.len, limit, d.sent);
      }
      const s = await ctrl.state(p.seconds + p.omit + GRACE_SECONDS).finally(() => clearTimeout(omit));
      limit.stop = true; // the senders stop at their next write, on a block boundary
      if (s !== State.TEST_END)
        throw new PeerError(
          s === State.CLIENT_TERMINATE
            ? 'the client terminated the test'
            : `state ${s} where TEST_END was expected`,
        );
      const seconds = (performance.now() - started) / 1000;
      // Reverse: the streams end here (FIN after what is queued), and EXCHANGE_RESULTS goes at once,
      // as iperf3's server closes its streams and sends it. At TEST_END the client turns its sockets
      // blocking and reads whole blocks (Nread) until it sees EXCHANGE_RESULTS; its earlier
      // non-blocking reads were partial, so a block of its own can straddle the end of the stream and
      // only the FIN lets that read return (without it: blocked until the sink gave up, then "unable
      // to send control message"). What was in flight when the client sent TEST_END is counted sent here
      // and not received there, as between two iperf3s (the client does not count what it reads after
      // TEST_END): ~0.05 % of a loopback test with -w 128K, several % autotuned on a loaded host.
      t.congestion = congestionOf(t);
      if (p.reverse) for (const d of t.data) d.conn.socket.end();
      // a reset after the end (a client that closes with bytes unread) is not the test's error
      const errors = t.data.map((d) => d.conn.error?.message);
      const cpu = cpuUtil(process.cpuUsage(cpu0), seconds);
      ctrl.sendState(State.EXCHANGE_RESULTS);
      const client = readResults(await ctrl.json());
      ctrl.sendJson(
        resultsDocument({
          ...cpu,
          senderHasRetransmits: p.reverse ? 1 : -1,
          // iperf3 -c prints it as the sender's or receiver's congestion control (-J: *_tcp_congestion)
          congestion: t.congestion,
          streams: t.data.map((d) => ({
            id: d.id,
            bytes: p.reverse ? sentBytes(d) : receivedBytes(d),
            retransmits: p.reverse ? (d.conn.socketStats()?.totalRetrans ?? 0) : -1,
            startSeconds: 0,
            endSeconds: seconds,
          })),
        }),
      );
      ctrl.sendState(State.DISPLAY_RESULTS);
      await ctrl.state().catch(() => State.IPERF_DONE); // IPERF_DONE, or the client just closes
      await this.closeData(t, p.reverse);
      this.report(t, p, seconds, client, errors);
    } catch (e) {
      error = (e as Error).message;
    } finally {
      for (const d of t.data) d.conn.socket.destroy();
      conn.socket.destroy();
      if (error && t.interrupted && t.running) {
        this.reportInterrupted(t, t.running);
        error = undefined;
      }
      if (error) {
        this.totals.errors++;
        this.totals.tests++;
        this.emit('test', { iperf3: true, error, streams: t.data.length });
      }
      this.test = undefined;
      if (this.opts.once) void this.stop();
    }
  }

  /** Forward: the client closes its data connections after IPERF_DONE; reverse: this end closes its own. */
  private async closeData(t: Test, reverse: boolean): Promise<void> {
    await Promise.race([
      Promise.all(
        t.data.map((d) => {
          if (reverse) d.conn.socket.end();
          return d.conn.closed;
        }),
      ),
      new Promise((r) => setTimeout(r, CLOSE_WAIT_MS).unref()),
    ]);
  }

  private report(
    t: Test,
    p: Extract<ReturnType<typeof readParams>, { ok: true }>,
    seconds: number,
    client: ReturnType<typeof readResults>,
    errors: (string | undefined)[],
  ): void {
    const per = t.data.map((d, i) => {
      const s = streamSummary(d.conn, d.buffers);
      const line = {
        conn: d.id,
        stream: d.id,
        reverse: p.reverse,
        bytes: receivedBytes(d),
        sentBytes: sentBytes(d),
        seconds,
        bytesPerSecond: (p.reverse ? sentBytes(d) : receivedBytes(d)) / seconds,
        reads: s.reader.reads,
        meanReadBytes: s.reader.meanReadBytes,
        ...s,
        ...(errors[i] ? { error: errors[i] } : {}),
      };
      this.emit('connection', line);
      return line;
    });
    const bytes = per.reduce((a, l) => a + l.bytes, 0);
    const sent = per.reduce((a, l) => a + l.sentBytes, 0);
    const clientBytes = client.streams.reduce((a, s) => a + s.bytes, 0);
    Object.assign(this.totals, {
      tests: this.totals.tests + 1,
      connections: this.totals.connections + per.length,
      bytes: this.totals.bytes + bytes,
      sentBytes: this.totals.sentBytes + sent,
      seconds: this.totals.seconds + seconds,
    });
    this.emit('test', {
      iperf3: true,
      reverse: p.reverse,
      streams: p.parallel,
      seconds,
      bytes,
      sentBytes: sent,
      bytesPerSecond: (p.reverse ? sent : bytes) / seconds,
      // iperf3 -w pinned this end's buffers (autotuning off): what iperf3 never says
      window: p.window ?? 'auto',
      pinned: p.window !== undefined,
      ...(t.congestion ? { congestion: t.congestion } : {}),
      ...(p.reverse ? limitedShare(per) : {}),
      ...(p.clientVersion ? { clientVersion: p.clientVersion } : {}),
      client: {
        bytes: clientBytes,
        retransmits: client.streams.reduce((a, s) => a + Math.max(0, s.retransmits), 0),
        cpuUtilTotal: client.cpuUtilTotal,
      },
    });
  }

  /** A running test cut by stop(true): what it moved until then, said as interrupted. */
  private reportInterrupted(t: Test, running: { at: number; reverse: boolean }): void {
    const seconds = (performance.now() - running.at) / 1000;
    const bytes = t.data.reduce((a, d) => a + receivedBytes(d), 0);
    const sent = t.data.reduce((a, d) => a + sentBytes(d), 0);
    Object.assign(this.totals, {
      tests: this.totals.tests + 1,
      interrupted: this.totals.interrupted + 1,
      connections: this.totals.connections + t.data.length,
      bytes: this.totals.bytes + bytes,
      sentBytes: this.totals.sentBytes + sent,
      seconds: this.totals.seconds + seconds,
    });
    this.emit('test', {
      iperf3: true,
      interrupted: true,
      reverse: running.reverse,
      streams: t.data.length,
      seconds,
      bytes,
      sentBytes: sent,
      bytesPerSecond: (running.reverse ? sent : bytes) / seconds,
    });
  }

  /** One line per data connection of the running test. */
  private interval(): void {
    const now = performance.now();
    const dt = (now - this.last) / 1000;
    this.last = now;
    if (this.test?.want !== undefined) return;
    for (const d of this.test?.data ?? []) {
      const r = d.conn.reader;
      const read = r.bytes + d.sent.bytes - d.lastBytes;
      const reads = r.reads - d.lastReads;
      d.lastBytes = r.bytes + d.sent.bytes;
      d.lastReads = r.reads;
      const st = d.conn.intervalStats();
      this.emit('interval', {
        conn: d.id,
        stream: d.id,
        seconds: (now - d.conn.openedAt) / 1000,
        intervalSeconds: dt,
        bytes: read,
        bytesPerSecond: read / dt,
        reads,
        meanReadBytes: reads && !d.sent.bytes ? read / reads : 0,
        readerSizeBytes: st.reader.sizeBytes,
        ...st,
      });
    }
  }

  /** Stops accepting; resolves `done` once the test in progress has ended (at once with `abort`). */
  async stop(abort = false): Promise<Iperf3SinkResult> {
    if (abort && this.test) {
      this.test.interrupted = true;
      for (const d of this.test.data) d.conn.socket.destroy();
    }
    if (!this.stopping) {
      this.stopping = true;
      void this.server.close(abort);
      void (this.current ?? Promise.resolve()).then(() => this.end());
    }
    return this.done;
  }

  private end(): void {
    clearInterval(this.timer);
    const t = this.totals;
    this.finish({
      iperf3: true,
      reader: formatReader(this.opts.reader),
      tests: t.tests,
      connections: t.connections,
      bytes: t.bytes,
      sentBytes: t.sentBytes,
      seconds: t.seconds,
      bytesPerSecond: t.seconds > 0 ? (t.bytes + t.sentBytes) / t.seconds : 0,
      errors: t.errors,
      refused: t.refused,
      interrupted: t.interrupted,
    });
  }
}
