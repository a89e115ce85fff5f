// Real sockets on loopback, seen through the real sock_diag dump.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../../src/index.js';
import { analyze } from '../../src/observe/analyze.js';
import {
  dumpSockets,
  inspectSockets,
  readHostLimits,
  takeSnapshot,
  watchSockets,
} from '../../src/observe/inspect.js';
import { SO_RCVBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import { bindFd, createSocket, listenFd, listenOnFd, setIntOption } from '../../src/sys/socket.js';

/** A server whose connections read 64 KiB every 5 ms: slower than a loopback sender. */
async function slowServer(pinRcvbuf?: number): Promise<net.Server> {
  const timers: NodeJS.Timeout[] = [];
  const server = net.createServer((c) => {
    c.pause();
    const t = setInterval(() => c.read(65536), 5);
    timers.push(t);
    c.on('close', () => clearInterval(t));
    c.on('error', () => {});
  });
  server.on('close', () => {
    for (const t of timers) clearInterval(t);
  });
  if (pinRcvbuf === undefined) {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  } else {
    const fd = createSocket('127.0.0.1', SOCK_STREAM);
    setIntOption(fd, SOL_SOCKET, SO_RCVBUF, pinRcvbuf); // before listen: accepted sockets inherit it
    bindFd(fd, { host: '127.0.0.1', port: 0 });
    listenFd(fd);
    await listenOnFd(server, fd);
  }
  return server;
}

/** Writes as fast as the socket takes it, at most `limit` bytes, until stopped. */
function flood(port: number, limit: number): { socket: net.Socket; stop: () => void } {
  const socket = net.connect(port, '127.0.0.1');
  const chunk = Buffer.alloc(65536, 7);
  let sent = 0;
  let stopped = false;
  const pump = () => {
    while (!stopped && sent < limit) {
      sent += chunk.length;
      if (!socket.write(chunk)) return;
    }
  };
  socket.on('connect', pump);
  socket.on('drain', pump);
  socket.on('error', () => {});
  return {
    socket,
    stop: () => {
      stopped = true;
      socket.destroy();
    },
  };
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

test('under load, the pinned connection is flagged and the autotuned one is not', {
  timeout: 20_000,
}, async () => {
  const pinned = await slowServer(8192);
  const auto = await slowServer();
  const ports = [portOf(pinned), portOf(auto)];
  // bounded in bytes (2 GiB each, far more than a few seconds move) and in time (below)
  const flows = ports.map((p) => flood(p, 2 ** 31));
  try {
    await sleep(300);
    const first = takeSnapshot({ protocols: ['tcp'], families: [4] });
    await sleep(700);
    const second = takeSnapshot({ protocols: ['tcp'], families: [4] });
    const rows = analyze(second, readHostLimits(), first).filter(
      (r) => r.state === 'established' && (ports.includes(r.localPort) || ports.includes(r.remotePort)),
    );
    const ofPinned = rows.filter((r) => r.localPort === ports[0] || r.remotePort === ports[0]);
    const ofAuto = rows.filter((r) => r.localPort === ports[1] || r.remotePort === ports[1]);
    assert.equal(ofPinned.length, 2, 'both ends of the pinned connection');
    assert.equal(ofAuto.length, 2, 'both ends of the autotuned connection');
    const why = JSON.stringify(rows, null, 1);
    const sender = ofPinned.find((r) => r.remotePort === ports[0]);
    const receiver = ofPinned.find((r) => r.localPort === ports[0]);
    assert.ok(sender && receiver);
    assert.ok((sender.intervalSeconds ?? 0) > 0.5, 'ratios cover the interval between samples');
    assert.equal(receiver.rcvWscale, 0, why);
    assert.ok(
      sender.flags.some((f) => f.kind === 'rwnd-limited'),
      `the pinned sender is rwnd-limited and flagged: ${why}`,
    );
    assert.ok(
      receiver.flags.some((f) => f.kind === 'pinned-rcvbuf'),
      why,
    );
    for (const r of ofAuto) assert.equal(r.limited, false, `autotuned socket flagged: ${why}`);
    // owners: the test process holds all four
    for (const r of rows) assert.equal(r.pid, process.pid);
  } finally {
    for (const f of flows) f.stop();
    await Promise.all([pinned, auto].map((s) => new Promise((r) => s.close(r))));
  }
});

test('UDP over IPv6: a socket that is sent more than its buffer holds shows drops and is flagged', async () => {
  const rx = dgram.createSocket({ type: 'udp6', recvBufferSize: 4096 });
  const tx = dgram.createSocket('udp6');
  try {
    rx.on('message', () => {}); // node reads it: stop reading to let the buffer fill
    await new Promise<void>((r) => rx.bind(0, '::1', r));
    const port = rx.address().port;
    // @ts-expect-error: Node internal, stops the read loop so the kernel queue fills
    rx._handle.recvStop();
    for (let i = 0; i < 60; i++) await new Promise((r) => tx.send(Buffer.alloc(1000), port, '::1', r));
    const s = inspectSockets({ protocols: ['udp'], families: [6], port, pid: process.pid });
    assert.equal(s.sockets.length, 1);
    const [row] = s.sockets;
    assert.equal(row.family, 6);
    assert.equal(row.localAddress, '::1');
    assert.equal(row.rcvbufBytes, 8192);
    assert.ok((row.drops ?? 0) > 0, JSON.stringify(row));
    assert.equal(row.flags[0]?.kind, 'udp-drops');
    assert.equal(row.pid, process.pid);
  } finally {
    rx.close();
    tx.close();
  }
});

test('watchSockets yields bounded samples whose ratios cover the interval', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '::1', r));
  try {
    const port = portOf(server);
    const samples = [];
    // --port matches either end: another test's connection may have this number as its port too
    const only = { port, protocols: ['tcp' as const], families: [6 as const], state: 'listen' };
    for await (const s of watchSockets(only, 0.05, 2)) samples.push(s);
    assert.equal(samples.length, 2);
    for (const s of samples) {
      assert.ok((s.intervalSeconds ?? 0) > 0);
      assert.equal(s.sockets.length, 1);
      assert.equal(s.sockets[0].state, 'listen');
      assert.equal(s.sockets[0].localAddress, '::1');
    }
    const ac = new AbortController();
    ac.abort();
    const none = [];
    for await (const s of watchSockets({ port }, 10, undefined, ac.signal)) none.push(s);
    assert.equal(none.length, 0, 'an aborted watch stops at once');
  } finally {
    server.close();
  }
});

test('dumpSockets: a listener appears with its port, family and state', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = portOf(server);
    const found = dumpSockets({ protocols: ['tcp'], families: [4], states: 1 << 10 }).filter(
      (s) => s.localPort === port,
    );
    assert.equal(found.length, 1);
    assert.equal(found[0].stateName, 'listen');
    assert.ok(found[0].inode > 0);
    const none = dumpSockets({ protocols: ['tcp'], families: [4], states: 1 << 1 }).filter(
      (s) => s.localPort === port,
    );
    assert.equal(none.length, 0, 'the state mask is applied by the kernel');
  } finally {
    server.close();
  }
});

test('watchSockets checks its interval: a UsageError naming intervalSeconds, before any dump', async () => {
  for (const bad of [0.01, 3601, Number.NaN]) {
    await assert.rejects(
      watchSockets({}, bad, 1).next(),
      (err: unknown) =>
        err instanceof UsageError &&
        err.option === 'intervalSeconds' &&
        /\(expected a duration from 50 ms to 1 h\)/.test(err.message),
      String(bad),
    );
  }
});
