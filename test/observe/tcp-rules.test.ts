// Each pathology of docs/diagnosis.md made with real sockets on loopback and judged from two real
// sock_diag samples a second apart. Where the rule must work from one host alone, the peer's socket
// is left out of the samples (as if it were on another machine): the kernel's figures are real.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { analyze, type InspectedSocket } from '../../src/observe/analyze.js';
import { readHostLimits, takeSnapshot } from '../../src/observe/inspect.js';
import type { DiagSocket } from '../../src/observe/sockdiag.js';
import { SO_RCVBUF, SO_SNDBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import {
  bindFd,
  connectFd,
  createSocket,
  listenFd,
  listenOnFd,
  setIntOption,
  socketFromFd,
} from '../../src/sys/socket.js';

type Ends = { server: net.Server; client: net.Socket; port: number; stop: () => Promise<void> };

/**
 * A listener (SO_RCVBUF pinned before listen when `rcvbuf`), a client (SO_SNDBUF pinned before
 * connect when `sndbuf`) writing 256 KiB messages for at most `seconds`, and a server side that
 * reads (`read`) or never reads.
 */
async function ends(o: { rcvbuf?: number; sndbuf?: number; read: boolean; seconds: number }): Promise<Ends> {
  const accepted: net.Socket[] = [];
  const server = net.createServer({ pauseOnConnect: !o.read }, (c) => {
    accepted.push(c);
    c.on('error', () => {});
    if (o.read) c.on('data', () => {});
  });
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  if (o.rcvbuf) setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, o.rcvbuf);
  bindFd(lfd, { host: '127.0.0.1', port: 0 });
  listenFd(lfd);
  await listenOnFd(server, lfd);
  const port = (server.address() as net.AddressInfo).port;
  const cfd = createSocket('127.0.0.1', SOCK_STREAM);
  if (o.sndbuf) setIntOption(cfd, SOL_SOCKET, SO_SNDBUF, o.sndbuf);
  await connectFd(cfd, { host: '127.0.0.1', port }, 5);
  const client = socketFromFd(cfd);
  client.on('error', () => {});
  const msg = Buffer.alloc(256 * 1024, 7);
  const until = performance.now() + o.seconds * 1000;
  const pump = () => {
    while (performance.now() < until && !client.destroyed) if (!client.write(msg)) return;
  };
  client.on('drain', pump);
  pump();
  return {
    server,
    client,
    port,
    stop: async () => {
      client.destroy();
      for (const c of accepted) c.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Two samples `gapMs` apart of this connection, judged; `leave` drops one end (on another host). */
async function judge(port: number, leave?: 'client' | 'server', gapMs = 1000): Promise<InspectedSocket[]> {
  const mine = (s: DiagSocket) =>
    s.stateName === 'established' &&
    ((s.localPort === port && leave !== 'server') || (s.remotePort === port && leave !== 'client'));
  const take = () => {
    const snap = takeSnapshot({ protocols: ['tcp'], families: [4] });
    return { ...snap, sockets: snap.sockets.filter(mine) };
  };
  const first = take();
  await sleep(gapMs);
  return analyze(take(), readHostLimits(), first);
}

const kinds = (r?: InspectedSocket) => r?.flags.map((f) => f.kind) ?? [];
const show = (rows: InspectedSocket[]) => JSON.stringify(rows, null, 1);

test('a pinned send buffer (SO_SNDBUF 16384, tb 32 KiB) writing 256 KiB messages: pinned-sndbuf, seen from the sender alone', {
  timeout: 20_000,
}, async () => {
  const e = await ends({ sndbuf: 16384, read: true, seconds: 8 });
  try {
    await sleep(300);
    const rows = await judge(e.port, 'server');
    assert.equal(rows.length, 1, show(rows));
    const [sender] = rows;
    assert.equal(sender.sndbufBytes, 32768);
    assert.deepEqual(kinds(sender), ['pinned-sndbuf'], show(rows));
    assert.match(sender.flags[0].reason, /send buffer 32 KiB.*full.*per round trip/);
    assert.equal(sender.pid, process.pid);
  } finally {
    await e.stop();
  }
});

test('a pinned receive buffer (SO_RCVBUF 16384 before listen) with a reader that reads: pinned-rcvbuf from the receiver alone', {
  timeout: 20_000,
}, async () => {
  const e = await ends({ rcvbuf: 16384, read: true, seconds: 8 });
  try {
    await sleep(300);
    const rows = await judge(e.port, 'client');
    assert.equal(rows.length, 1, show(rows));
    const [receiver] = rows;
    assert.equal(receiver.rcvWscale, 0);
    assert.deepEqual(kinds(receiver), ['pinned-rcvbuf'], show(rows));
    assert.match(receiver.flags[0].reason, /SO_RCVBUF.*it is receiving/);
  } finally {
    await e.stop();
  }
});

for (const rcvbuf of [undefined, 16384]) {
  const what = rcvbuf ? 'pinned' : 'autotuned';
  test(`a stalled ${what} reader: stalled-reader at both ends, nobody told to remove a setsockopt`, {
    timeout: 20_000,
  }, async () => {
    const e = await ends({ rcvbuf, read: false, seconds: 4 });
    try {
      await sleep(1300); // the window closes at once; a second with nothing received says stalled
      const rows = await judge(e.port, undefined, 300);
      assert.equal(rows.length, 2, show(rows));
      const receiver = rows.find((r) => r.localPort === e.port);
      const sender = rows.find((r) => r.remotePort === e.port);
      assert.deepEqual(kinds(receiver), ['stalled-reader'], show(rows));
      assert.deepEqual(kinds(sender), ['stalled-reader'], show(rows));
      for (const r of rows) assert.doesNotMatch(r.flags[0].reason, /remove/);
      assert.match(
        receiver?.flags[0].reason ?? '',
        rcvbuf ? /pinned too, but that is not the cause/ : /zero window/,
      );
      // the sender alone tells it by the zero window it probes
      const [alone] = await judge(e.port, 'server', 100);
      assert.deepEqual(kinds(alone), ['stalled-reader']);
    } finally {
      await e.stop();
    }
  });
}

test('autotuned sockets carrying load: nothing flagged at either end', { timeout: 20_000 }, async () => {
  const e = await ends({ read: true, seconds: 6 });
  try {
    await sleep(300);
    const rows = await judge(e.port);
    assert.equal(rows.length, 2, show(rows));
    assert.ok((rows.find((r) => r.remotePort === e.port)?.sentBytesPerSecond ?? 0) > 10e6, show(rows));
    for (const r of rows) assert.deepEqual(kinds(r), [], show(rows));
  } finally {
    await e.stop();
  }
});
