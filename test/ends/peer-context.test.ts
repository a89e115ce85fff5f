// Errors with context at every end (issue 44, item 6): sink tcp, remote's control connection, blast tcp's
// connect and bench's ping end say a peer's failure through one helper (src/ends/peer-failure.ts): whom
// (role and address), what this end was doing, and the likely cause. Before, each said a bare errno
// (`read ECONNRESET`, `cannot connect to …: ECONNREFUSED`), and bench's ping end waited for ever on an
// echo end that reset. Real loopback sockets: plain node:net peers that reset or close; ~15 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { likelyCause, peerFailure, peerFailureText } from '../../src/ends/peer-failure.js';
import { PeerError } from '../../src/errors.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs node with `argv` to its end (killed at `timeoutMs`), its output kept. */
function run(argv: string[], timeoutMs = 30_000, onStdout?: (text: string) => void): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => {
      stdout += d;
      onStdout?.(stdout);
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A node:net server on loopback that does `each` with every connection. */
async function server(each: (s: net.Socket) => void): Promise<{ port: number; close: () => void }> {
  const srv = net.createServer((s) => {
    s.on('error', () => {});
    each(s);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as net.AddressInfo).port, close: () => srv.close() };
}

/** A port nothing listens on (the kernel's pick, closed again). */
async function closedPort(): Promise<number> {
  const s = await server(() => {});
  s.close();
  return s.port;
}

test('the one wording: whom, doing what, the system words, what moved, the likely cause', () => {
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  assert.equal(
    peerFailureText(reset, {
      peer: 'sink',
      at: { host: '::1', port: 5201 },
      doing: 'sending to',
      moved: { bytes: 2 ** 30, seconds: 2.5, streams: 2 },
    }),
    'sending to the sink at [::1]:5201: read ECONNRESET after 1 GiB in 2.5 s over 2 stream(s); the sink reset the connection (it exited, or closed with bytes unread)',
  );
  assert.match(
    String(likelyCause('ECONNREFUSED', 'receiver')),
    /nothing listens there \(is the receiver running/,
  );
  assert.equal(likelyCause('EINVAL', 'sink'), undefined);
  // not the peer's doing: the error as it was
  const bug = new TypeError('x is not a function');
  assert.equal(peerFailure(bug, { peer: 'sink', doing: 'sending to' }), bug);
  const e = peerFailure(reset, { peer: 'sink', doing: 'sending to' });
  assert.ok(e instanceof PeerError && e.cause === reset);
});

test('sink tcp: a sender that resets mid-stream is named by its address, with the cause', {
  timeout: 60_000,
}, async () => {
  let client: net.Socket | undefined;
  let from = 0;
  const sink = await run(
    [...SOCKBUF_ARGV, 'sink', 'tcp', '--listen', '127.0.0.1:0', '--once'],
    30_000,
    (out) => {
      const port = /^listening on 127\.0\.0\.1:(\d+)$/m.exec(out)?.[1];
      if (port === undefined || client) return;
      client = net.connect(Number(port), '127.0.0.1', () => {
        from = (client as net.Socket).localPort as number;
        (client as net.Socket).write(Buffer.alloc(1 << 20, 7));
        setTimeout(() => (client as net.Socket).resetAndDestroy(), 300);
      });
      client.on('error', () => {});
    },
  );
  assert.equal(sink.status, 0, sink.stderr);
  assert.match(
    sink.stdout,
    new RegExp(
      `error: receiving from the sender at 127\\.0\\.0\\.1:${from}: read ECONNRESET; the sender reset the connection \\(it exited, or closed with bytes unread\\)`,
    ),
  );
});

test('remote: a server that resets or closes is named with what remote was doing', {
  timeout: 60_000,
}, async () => {
  const resets = await server((s) => {
    s.resume();
    setTimeout(() => s.resetAndDestroy(), 200);
  });
  const closes = await server((s) => s.end());
  try {
    const r = await run([...SOCKBUF_ARGV, 'remote', `127.0.0.1:${resets.port}`, '--', 'sink', 'tcp']);
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^sockbuf: saying hello to the sockbuf serve at 127\\.0\\.0\\.1:${resets.port}: read ECONNRESET; the sockbuf serve reset the connection`,
      ),
    );
    const c = await run([...SOCKBUF_ARGV, 'remote', `127.0.0.1:${closes.port}`, '--', 'sink', 'tcp']);
    assert.equal(c.status, 3, c.stderr);
    assert.match(
      c.stderr,
      new RegExp(
        `^sockbuf: saying hello to the sockbuf serve at 127\\.0\\.0\\.1:${closes.port}: it closed the connection`,
      ),
    );
  } finally {
    resets.close();
    closes.close();
  }
});

test('blast tcp to a port nothing listens on: the sink named, and the likely cause', {
  timeout: 60_000,
}, async () => {
  const port = await closedPort();
  const r = await run([...SOCKBUF_ARGV, 'blast', 'tcp', '--to', `127.0.0.1:${port}`, '--duration', '1s']);
  assert.equal(r.status, 3, r.stderr);
  assert.equal(
    r.stderr.trim(),
    `sockbuf: connecting to the sink at 127.0.0.1:${port}: ECONNREFUSED; nothing listens there (is the sink running, on that port?)`,
  );
});

test("bench's ping end: an echo end that resets is said with its address, at once (it waited for ever)", {
  timeout: 60_000,
}, async () => {
  const END = fileURLToPath(new URL('../../src/ends/bench-tcp.child.ts', import.meta.url));
  // reads the hello and the requests, never answers, resets after 300 ms
  const echo = await server((s) => {
    s.resume();
    setTimeout(() => s.resetAndDestroy(), 300);
  });
  try {
    const args = ['--host', '127.0.0.1', '--port', String(echo.port), '--size', '100', '--inflight', '4'];
    const t0 = performance.now();
    const r = await run(['--import', 'tsx', END, 'ping', ...args, '--seconds', '5'], 20_000);
    assert.equal(r.status, 1, r.stderr);
    assert.ok(performance.now() - t0 < 15_000, 'said at the reset, not at a timeout');
    assert.match(
      r.stderr,
      new RegExp(
        `^waiting for answers from the echo end at 127\\.0\\.0\\.1:${echo.port}: read ECONNRESET after 0 B in [\\d.]+ m?s; the echo end reset the connection`,
      ),
    );
    const refused = await run(
      [
        '--import',
        'tsx',
        END,
        'ping',
        ...args.slice(0, 2),
        '--port',
        String(await closedPort()),
        ...args.slice(4),
        '--seconds',
        '1',
      ],
      20_000,
    );
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /^connecting to the echo end at 127\.0\.0\.1:\d+: ECONNREFUSED; nothing listens there/,
    );
  } finally {
    echo.close();
  }
});

test("bench's idle end: a holder that is not there is said, exit 1 (it ended saying nothing)", {
  timeout: 60_000,
}, async () => {
  const END = fileURLToPath(new URL('../../src/ends/bench-tcp.child.ts', import.meta.url));
  const port = await closedPort();
  const args = ['idle', '--host', '127.0.0.1', '--port', String(port), '--conns', '3', '--burst', '10'];
  const r = await run(['--import', 'tsx', END, ...args], 20_000);
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(`^connecting to the holder at 127\\.0\\.0\\.1:${port}: ECONNREFUSED; nothing listens there`),
  );
});
