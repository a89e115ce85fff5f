// Ends for the TCP scenarios that are not a sink/blast pair, run as `node bench-tcp.child.js ROLE --key value …`
// by the bench runner (one JSON object per line on stdout, src/bench/ends.ts):
//   hold   --host H --reader R --conns N        accepts N connections, reads what they send, then
//                                                measures memory per idle connection; prints result
//   idle   --host H --port P --conns N --burst B opens N connections, writes B bytes on each, waits
//   ping   --host H --port P --size S --inflight K --seconds T --sndbuf X --rcvbuf X [--write-hwm B]
//                                                K frames in flight; round trips/s and latency. With
//                                                --write-hwm the socket's writableHighWaterMark is B and
//                                                the writer waits for 'drain' when a write says so (a
//                                                request due meanwhile waits in the process, its latency
//                                                counted from when it was due); without, it never waits
// (ping's far end is `sockbuf sink tcp --echo`, so that `bench ping --remote` can run it on a serve host)
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PeerError, SockbufError } from '../errors.js';
import { connect, listen, type TcpConnection } from '../tcp/connection.js';
import { FrameDecoder } from '../tcp/frame.js';
import { parseReader, sharedReadBufferBytes } from '../tcp/reader.js';
import { printEvent } from './event.js';
import { encodeHello } from './hello.js';
import { errorCode, peerFailure } from './peer-failure.js';

function args(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  return out;
}

const buf = (v: string | undefined) => (v === undefined || v === 'auto' ? undefined : Number(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function gc(): void {
  setFlagsFromString('--expose-gc');
  const f = runInNewContext('gc') as () => void;
  f();
  f();
}

async function hold(a: Record<string, string>): Promise<void> {
  const conns = Number(a.conns);
  const spec = parseReader(a.reader);
  const open: TcpConnection[] = [];
  let bytes = 0;
  gc();
  const before = process.memoryUsage();
  const srv = await listen({ host: a.host, port: 0, reader: spec, backlog: 4096 }, (c) => {
    open.push(c);
    c.onData = (chunk) => {
      bytes += chunk.length;
    };
  });
  printEvent('ready', { host: srv.host, port: srv.port });
  const want = conns * Number(a.burst);
  const deadline = Date.now() + 120_000;
  while ((open.length < conns || bytes < want) && Date.now() < deadline) await sleep(50);
  await sleep(500); // idle
  gc();
  const after = process.memoryUsage();
  const readBuffer = sharedReadBufferBytes() * (spec.kind === 'adaptive' ? 1 : 0);
  const own = open.reduce((s, c) => s + c.reader.stats().ownBufferBytes, 0);
  const sizes = open.map((c) => c.reader.stats().sizeBytes);
  const n = open.length;
  printEvent('result', {
    reader: a.reader,
    conns: n,
    bytes,
    readBufferBytesPerConn: (readBuffer + own) / n,
    sharedReadBufferBytes: readBuffer,
    maxNextReadBytes: Math.max(...sizes),
    rssBytesPerConn: (after.rss - before.rss) / n,
    heapBytesPerConn: (after.heapUsed - before.heapUsed) / n,
    arrayBuffersBytesPerConn: (after.arrayBuffers - before.arrayBuffers) / n,
  });
  // every connection closed with the listener: nothing is left to keep the process up
  await srv.close(true);
}

async function idle(a: Record<string, string>): Promise<void> {
  const conns = Number(a.conns);
  const burst = Buffer.alloc(Number(a.burst), 7);
  const socks: net.Socket[] = [];
  const batch = 200;
  for (let i = 0; i < conns; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, conns - i) }, async () => {
        const s = net.connect({ host: a.host, port: Number(a.port) });
        // a refused or reset connect ends the role, said with the holder's address (it waited for ever)
        await new Promise<void>((resolve, reject) => {
          s.once('connect', () => resolve());
          s.once('error', (e) =>
            reject(
              peerFailure(e, {
                peer: 'holder',
                at: { host: a.host, port: Number(a.port) },
                doing: 'connecting to',
                said: errorCode(e),
              }),
            ),
          );
        });
        s.on('error', () => {});
        s.write(burst);
        socks.push(s);
      }),
    );
  }
  printEvent('result', { conns: socks.length });
  // the holder closes them once it has measured
  await Promise.all(socks.map((s) => new Promise((r) => (s.destroyed ? r(0) : s.once('close', r)))));
}

async function ping(a: Record<string, string>): Promise<void> {
  const size = Number(a.size);
  const inflight = Number(a.inflight);
  const seconds = Number(a.seconds);
  // each request carries its index in its first 8 bytes (when it has 8), the rest is a shared body:
  // the echo is checked against both, so a lost, repeated, reordered or changed answer is counted
  const indexed = size >= 8;
  const body = Buffer.alloc(indexed ? size - 8 : size, 5);
  const hwm = a['write-hwm'] === undefined ? undefined : Number(a['write-hwm']);
  let nextIndex = 0;
  let waiting = false;
  let owed = 0;
  let drainWaits = 0;
  const sendRequest = () => {
    sent.push(performance.now());
    if (waiting) owed++;
    else writeRequest();
  };
  const onDrain = () => {
    waiting = false;
    while (owed > 0 && !waiting) {
      owed--;
      writeRequest();
    }
  };
  const writeRequest = () => {
    const head = Buffer.allocUnsafe(indexed ? 12 : 4);
    head.writeUInt32BE(size, 0);
    if (indexed) {
      head.writeUInt32BE(Math.floor(nextIndex / 2 ** 32), 4);
      head.writeUInt32BE(nextIndex >>> 0, 8);
    }
    nextIndex++;
    conn.socket.cork();
    conn.socket.write(head);
    const room = conn.socket.write(body);
    conn.socket.uncork();
    if (hwm !== undefined && !room) {
      waiting = true;
      drainWaits++;
      conn.socket.once('drain', onDrain);
    }
  };
  const sent: number[] = [];
  const lat: number[] = [];
  let mismatches = 0;
  let done = false;
  // the echo end's failure (refused, reset, closed early) said with its address (peer-failure.ts)
  const peer = { peer: 'echo end', at: { host: a.host, port: Number(a.port) } };
  const conn = await connect({
    host: a.host,
    port: Number(a.port),
    rcvbuf: buf(a.rcvbuf),
    sndbuf: buf(a.sndbuf),
    writableHighWaterMark: hwm,
  }).catch((e: unknown) => {
    throw peerFailure(e, { ...peer, doing: 'connecting to', said: errorCode(e) });
  });
  // the far end (sink --echo) takes a hello first; a serve far end requires its secret in it
  const secret = process.env.SOCKBUF_SECRET || undefined;
  conn.socket.write(
    encodeHello({
      sockbuf: 1,
      test: randomUUID(),
      stream: 0,
      streams: 1,
      reverse: false,
      size,
      echo: true,
      ...(secret ? { secret } : {}),
    }),
  );
  const end = performance.now() + seconds * 1000;
  let head = 0;
  const finished = new Promise<void>((resolve) => {
    const dec = new FrameDecoder((p) => {
      const now = performance.now();
      const want = head;
      lat.push(now - sent[head++]);
      const ok =
        p.length === size &&
        (!indexed ||
          (((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0) * 2 ** 32 +
            (((p[4] << 24) | (p[5] << 16) | (p[6] << 8) | p[7]) >>> 0) ===
            want) &&
        body.equals(p.subarray(indexed ? 8 : 0));
      if (!ok) mismatches++;
      if (now < end) sendRequest();
      else if (head === sent.length && !done) {
        done = true;
        resolve();
      }
      return true;
    });
    conn.onData = (chunk) => {
      dec.push(chunk);
    };
  });
  const started = performance.now();
  for (let i = 0; i < inflight; i++) sendRequest();
  // an echo end that resets or closes before the last answer: said with what had come back, not waited on
  const early = conn.closed.then((err) => {
    if (done) return;
    const moved = { bytes: lat.length * (size + 4) * 2, seconds: (performance.now() - started) / 1000 };
    const what = err ?? new PeerError('it closed the connection before the last answer');
    throw peerFailure(what, { ...peer, doing: 'waiting for answers from', moved });
  });
  await Promise.race([finished, early]);
  const secs = (performance.now() - started) / 1000;
  conn.socket.end();
  lat.sort((x, y) => x - y);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] * 1000;
  printEvent('result', {
    roundTrips: lat.length,
    seconds: secs,
    roundTripsPerSecond: lat.length / secs,
    bytesPerSecond: (lat.length * (size + 4) * 2) / secs,
    latencyP50Us: q(0.5),
    latencyP99Us: q(0.99),
    latencyP999Us: q(0.999),
    mismatches,
    writableHighWaterMark: conn.socket.writableHighWaterMark,
    drainWaits,
  });
  await conn.closed;
  if (mismatches > 0) {
    process.stderr.write(`${mismatches} echoed answers differ from their requests\n`);
    process.exitCode = 1;
  }
}

const roles: Record<string, (a: Record<string, string>) => Promise<void>> = { hold, idle, ping };
const [role, ...rest] = process.argv.slice(2);
const run = roles[role];
// the process ends when its role has closed what it opened; a failure is said on stderr (the runner
// keeps its tail) with status 1, a role it does not know with 2
if (!run) {
  process.stderr.write(`usage: bench-tcp.child.js hold|idle|ping --key value …\n`);
  process.exitCode = 2;
} else
  run(args(rest)).catch((e: unknown) => {
    // sockbuf's own errors say themselves in one line; anything else with its stack
    process.stderr.write(`${e instanceof SockbufError ? e.message : ((e as Error).stack ?? String(e))}\n`);
    process.exitCode = 1;
  });
