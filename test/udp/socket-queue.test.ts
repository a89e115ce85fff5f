// Issue 45 item 2: with no option set (the preload's defaults), a server's socket that answers (bound to
// a port it named, sending) answers an overload no later than node:dgram does: its queue gets a bound
// (socket-receive.ts's ANSWER_QUEUE_DELAY) and what waited longer is dropped and counted as stale, where
// the 8 MiB buffer alone held the whole backlog (answers seconds late). A server that never sends
// (StatsD) keeps every datagram, and so does a server given `maxQueueDelay: 0`. Real sockets on loopback: the server here on the main thread spends
// 1 ms of CPU on each request (capacity ≤ 1 000/s); an open-loop client in a worker thread sends
// 3 000 a second for 1.5 s and measures each answer's delay. About 20 s in all.
import assert from 'node:assert/strict';
import nodeDgram from 'node:dgram';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { createSocket, type Socket } from '../../src/dgram.js';
import { sharedReader } from '../../src/udp/shared-reader.js';

const RATE = 3000;
const SECONDS = 1.5;
const WORK_MS = 1;

/** A port nothing listens on now (the kernel's pick), for a server that names its port. */
async function freePort(): Promise<number> {
  const s = nodeDgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** The open-loop client: RATE requests a second for SECONDS, each stamped; answers' delays (ms). */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const dgram = require('node:dgram');
const c = dgram.createSocket('udp4');
const delays = [];
c.on('message', (m) => delays.push(performance.now() - m.readDoubleLE(0)));
c.bind(0, '127.0.0.1', async () => {
  const { port, rate, seconds } = workerData;
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000));
    for (; sent < due; sent++) {
      const b = Buffer.alloc(32);
      b.writeDoubleLE(performance.now(), 0);
      c.send(b, port, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 1000));
  c.close();
  parentPort.postMessage({ sent, delays });
});
`;

interface Run {
  sent: number;
  answered: number;
  avgMs: number;
  maxMs: number;
  stale: number;
}

async function overload(make: () => Socket | nodeDgram.Socket, answer: boolean): Promise<Run> {
  const s = make();
  const port = await freePort();
  s.on('message', (m: Buffer, r: nodeDgram.RemoteInfo) => {
    const t = performance.now();
    while (performance.now() - t < WORK_MS);
    if (answer) s.send(m, r.port, r.address);
  });
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', () => r()));
  // a server is up before its flood: the reader thread it started at bind runs (the preload starts it
  // at process start); on a loaded host its start-up takes longer than this test's first requests
  if ('stats' in s) await sharedReader().start();
  try {
    const w = new Worker(CLIENT, { eval: true, workerData: { port, rate: RATE, seconds: SECONDS } });
    const res = await new Promise<{ sent: number; delays: number[] }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    const d = res.delays;
    const stale = 'stats' in s ? s.stats().stale : 0;
    return {
      sent: res.sent,
      answered: d.length,
      avgMs: d.reduce((a, b) => a + b, 0) / Math.max(1, d.length),
      maxMs: Math.max(0, ...d),
      stale,
    };
  } finally {
    await new Promise<void>((r) => s.close(() => r()));
  }
}

test('a server that answers, 3 × over its capacity, answers no later than node:dgram by default (stale drops counted)', async (t) => {
  const node = await overload(() => nodeDgram.createSocket('udp4'), true);
  const ours = await overload(() => createSocket('udp4'), true);
  const say = `node:dgram ${JSON.stringify(node)}, sockbuf/dgram ${JSON.stringify(ours)}`;
  t.diagnostic(say);
  assert.ok(node.answered > 0 && ours.answered > 0, say);
  // node:dgram's 208 KiB buffer holds a few hundred requests (a few hundred ms here); the 8 MiB
  // buffer, unbounded, held all of them: answers up to the run's length late
  assert.ok(ours.avgMs <= node.avgMs, `average delay: ${say}`);
  assert.ok(ours.maxMs <= 1.1 * node.maxMs, `max delay: ${say}`);
  assert.ok(ours.stale > 0, `what waited too long is counted: ${say}`);
});

test('a server that never sends (StatsD) keeps every datagram of the same overload: no bound by default', async () => {
  const s = createSocket('udp4');
  const port = await freePort();
  let got = 0;
  s.on('message', () => {
    const t = performance.now();
    while (performance.now() - t < WORK_MS);
    got++;
  });
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', () => r()));
  await sharedReader().start();
  try {
    const w = new Worker(CLIENT, { eval: true, workerData: { port, rate: RATE, seconds: 0.5 } });
    const { sent } = await new Promise<{ sent: number }>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
    for (let i = 0; i < 100 && got + s.stats().kernelDrops < sent; i++) await sleep(50);
    const st = s.stats();
    assert.equal(st.stale, 0, JSON.stringify(st));
    assert.equal(got + st.kernelDrops + st.userspaceDrops, sent, JSON.stringify(st));
    assert.equal(got, sent, `the 8 MiB buffer held them all: ${JSON.stringify(st)}`);
  } finally {
    await new Promise<void>((r) => s.close(() => r()));
  }
});

test('maxQueueDelay: 0 turns the default bound off: a server that answers then answers every request it holds', async () => {
  const ours = await overload(() => createSocket({ type: 'udp4', maxQueueDelay: 0 }), true);
  assert.equal(ours.stale, 0, JSON.stringify(ours));
});
