// Faults on a TCP stream, for both ends: the peer resets mid-stream, the peer half-closes.
// Real kernel sockets on loopback; each case bounded by the test timeout.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { encodeHello } from '../../src/ends/hello.js';
import { encodeFrame } from '../../src/tcp/frame.js';
import { sockbuf } from './helpers.js';

const T = { timeout: 60_000 };
const hello = (test: string) =>
  encodeHello({ sockbuf: 1, test, stream: 0, streams: 1, reverse: false, size: 65536 });
const frames = (n: number) =>
  Buffer.concat(Array.from({ length: n }, () => encodeFrame(Buffer.alloc(65536, 7))));

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

test(
  'sink tcp: a peer that resets mid-stream ends that connection with the error named; the sink reports and exits cleanly',
  T,
  async () => {
    const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--json']);
    try {
      const ready = await sink.line((l) => l.event === 'ready');
      const peer = await connect(Number(ready.port));
      peer.on('error', () => {});
      await new Promise<void>((r) => peer.write(Buffer.concat([hello('reset'), frames(16)]), () => r()));
      await sink
        .line((l) => l.event === 'interval' || l.event === 'connection' || Number(l.bytes) > 0)
        .catch(() => {});
      peer.resetAndDestroy();
      const conn = await sink.line((l) => l.event === 'connection');
      assert.match(String(conn.error), /ECONNRESET|reset/i);
      const result = await sink.line((l) => l.event === 'result');
      assert.equal(result.connections, 1);
      const { code } = await sink.exit;
      assert.equal(code, 0, `sink exit; stderr: ${sink.stderr()}`);
    } finally {
      sink.kill();
    }
  },
);

test(
  'sink tcp: a peer that half-closes has every byte counted, no error, and gets the close of the sink',
  T,
  async () => {
    const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--json']);
    try {
      const ready = await sink.line((l) => l.event === 'ready');
      const peer = await connect(Number(ready.port));
      const closedByPeer = new Promise<void>((r) => peer.once('end', () => r()));
      peer.resume();
      peer.end(Buffer.concat([hello('half'), frames(8)])); // FIN after the data; our read side stays open
      const conn = await sink.line((l) => l.event === 'connection');
      assert.equal(conn.error ?? undefined, undefined);
      assert.equal(conn.bytes, hello('half').length + 8 * (65536 + 4), 'every byte the peer sent');
      await closedByPeer;
      assert.equal((await sink.exit).code, 0);
    } finally {
      sink.kill();
    }
  },
);

/** A stand-in receiver: reads the hello and some data, then does `then` to the connection. */
async function receiver(then: (s: net.Socket) => void) {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    let got = 0;
    s.on('data', (d) => {
      got += d.length;
      if (got > 1 << 20 && !s.destroyed) {
        then(s);
        then = () => {};
      }
    });
  });
  await new Promise<void>((r) => server.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  return { server, port: (server.address() as net.AddressInfo).port };
}

test(
  'blast tcp: a receiver that resets mid-stream stops blast at once with the reason (exit 1), not at --duration',
  T,
  async () => {
    const { server, port } = await receiver((s) => s.resetAndDestroy());
    const blast = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--duration', '30s', '--json']);
    try {
      const { code } = await blast.exit;
      assert.equal(code, 1, blast.stderr());
      assert.match(blast.stderr() + JSON.stringify(blast.lines), /ECONNRESET|EPIPE|reset/i);
    } finally {
      blast.kill();
      server.close();
    }
  },
);

test(
  'blast tcp: a receiver that half-closes mid-transfer is taken as gone: blast stops and says so (exit 1)',
  T,
  async () => {
    const { server, port } = await receiver((s) => s.end());
    const blast = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--duration', '30s', '--json']);
    try {
      const { code } = await blast.exit;
      assert.equal(code, 1);
      assert.match(blast.stderr(), /the peer closed the connection before the transfer ended/);
    } finally {
      blast.kill();
      server.close();
    }
  },
);

// issue 37: after a connection error the summary said "0 mismatches" without the error count
test('sink tcp --verify (text): the summary counts the connection that ended in error', T, async () => {
  const { spawn } = await import('node:child_process');
  const { MAIN } = await import('./helpers.js');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--verify'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    let out = '';
    const port = await new Promise<number>((resolve) =>
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      }),
    );
    const peer = await connect(port);
    peer.on('error', () => {});
    await new Promise<void>((r) => peer.write(Buffer.concat([hello('err'), frames(4)]), () => r()));
    await new Promise((r) => setTimeout(r, 300));
    peer.resetAndDestroy();
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 1, 'an error under --verify is a problem found');
    assert.match(out, /^result: 1 connections, .*, 1 ended in error$/m);
  } finally {
    child.kill('SIGKILL');
  }
});
