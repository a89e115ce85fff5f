// sink tcp with peers sockbuf did not write (issue 15): nc, a Python socket, blast --raw into nc -l;
// and --verify's end checks (issue 18): gaps on a 256-frame boundary, a stream cut at a frame boundary.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { encodeHello } from '../../src/ends/hello.js';
import { encodeTrailer, PatternSource } from '../../src/ends/pattern.js';
import { sockbuf } from '../faults/helpers.js';
import { SOCKBUF_ARGV } from './argv.js';

const T = { timeout: 60_000 };
const PY = '/usr/bin/python3';

function run(cmd: string, args: string[], input?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, out }));
    c.stdin.end(input ?? '');
  });
}

async function sinkOnce(extra: string[] = []) {
  const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--json', ...extra]);
  const ready = await sink.line((l) => l.event === 'ready');
  return { sink, port: Number(ready.port) };
}

test(
  'a 50 MB stream from nc -N is counted to the byte by sink tcp --once --json, as a plain stream',
  T,
  async () => {
    const { sink, port } = await sinkOnce();
    try {
      const nc = await run('sh', ['-c', `head -c 50000000 /dev/zero | nc -N 127.0.0.1 ${port}`]);
      assert.equal(nc.code, 0);
      const conn = await sink.line((l) => l.event === 'connection');
      assert.equal(conn.bytes, 50_000_000);
      assert.equal(conn.plain, true);
      assert.equal(conn.error, undefined);
      assert.ok(Number(conn.reads) > 0 && Number(conn.bytesPerSecond) > 0);
      assert.ok(conn.reader && typeof conn.rttUs === 'number', 'reader stats and tcp_info at the end');
      const result = await sink.line((l) => l.event === 'result');
      assert.equal(result.bytes, 50_000_000);
      assert.equal(result.errors, 0);
      assert.equal((await sink.exit).code, 0);
    } finally {
      sink.kill();
    }
  },
);

test(
  'a Python socket sender (text, then close) and one shorter than the magic are plain streams',
  T,
  async () => {
    for (const payload of [`GET / HTTP/1.1\\r\\n${'x'.repeat(100_000)}`, '\\x89SO']) {
      const { sink, port } = await sinkOnce();
      try {
        const py = `import socket;s=socket.create_connection(("127.0.0.1",${port}));d=b"${payload}";s.sendall(d);s.close();print(len(d))`;
        const r = await run(PY, ['-c', py]);
        assert.equal(r.code, 0);
        const conn = await sink.line((l) => l.event === 'connection');
        assert.equal(conn.bytes, Number(r.out.trim()));
        assert.equal(conn.plain, true);
        assert.equal(conn.error, undefined);
        assert.equal((await sink.exit).code, 0);
      } finally {
        sink.kill();
      }
    }
  },
);

test('blast tcp --raw sends exactly --bytes zeros, no hello and no framing, into nc -l', T, async () => {
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const nc = run('sh', [
    '-c',
    `nc -l 127.0.0.1 ${port} | od -An -v -tx1 | tr -s ' \\n' '\\n' | sort | uniq -c`,
  ]);
  await new Promise((r) => setTimeout(r, 500));
  const blast = sockbuf([
    'blast',
    'tcp',
    '--raw',
    '--to',
    `127.0.0.1:${port}`,
    '--bytes',
    '1000000',
    '--json',
  ]);
  try {
    assert.equal((await blast.exit).code, 0, blast.stderr());
    const counts = (await nc).out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    const zeros = counts.find((c) => c[1] === '00');
    assert.equal(Number(zeros?.[0]), 1_000_000);
    assert.equal(counts.filter((c) => c[1] && c[1] !== '00').length, 0, 'nothing but zeros');
    const r = await blast.line((l) => l.event === 'result');
    assert.equal(r.bytes, 1_000_000);
  } finally {
    blast.kill();
  }
});

/** Frames 0..n−1 of blast's stream, as buffers. */
function frames(size: number, n: number): Buffer[] {
  const src = new PatternSource(size);
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const parts: Buffer[] = [];
    let left = size + 4;
    while (left > 0) {
      const v = Buffer.from(src.next(left));
      parts.push(v);
      left -= v.length;
    }
    out.push(Buffer.concat(parts));
  }
  return out;
}

async function feed(port: number, data: Buffer): Promise<void> {
  const s = net.connect({ host: '127.0.0.1', port });
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  await new Promise<void>((r) => s.end(data, () => r()));
}

const hello = encodeHello({ sockbuf: 1, test: 'v', stream: 0, streams: 1, reverse: false, size: 1000 });

test(
  '--verify catches 256 frames missing on a 256-frame boundary (the trailer says 1024 were sent)',
  T,
  async () => {
    const { sink, port } = await sinkOnce(['--verify']);
    try {
      const f = frames(1000, 1024);
      f.splice(256, 256);
      await feed(port, Buffer.concat([hello, ...f, encodeTrailer(1024 * 1004, 1024)]));
      const conn = await sink.line((l) => l.event === 'connection');
      assert.ok(Number(conn.mismatches) > 0, JSON.stringify(conn).slice(0, 300));
      assert.match(String(conn.error), /sent 1024 frames .*768 arrived/);
      assert.equal((await sink.exit).code, 1);
    } finally {
      sink.kill();
    }
  },
);

test('--verify catches a stream cut at a frame boundary (no trailer); a whole one passes', T, async () => {
  const cut = await sinkOnce(['--verify']);
  try {
    await feed(cut.port, Buffer.concat([hello, ...frames(1000, 300)]));
    const conn = await cut.sink.line((l) => l.event === 'connection');
    assert.equal(conn.mismatches, 0);
    assert.match(String(conn.error), /without a trailer after 300 frames/);
    assert.equal((await cut.sink.exit).code, 1);
  } finally {
    cut.sink.kill();
  }
  const whole = await sinkOnce(['--verify']);
  try {
    await feed(whole.port, Buffer.concat([hello, ...frames(1000, 300), encodeTrailer(300 * 1004, 300)]));
    const conn = await whole.sink.line((l) => l.event === 'connection');
    assert.equal(conn.error, undefined);
    assert.equal((await whole.sink.exit).code, 0);
  } finally {
    whole.sink.kill();
  }
});

test(
  'blast --reverse verifies what arrives: a sender that drops 256 aligned frames fails it (exit 1)',
  T,
  async () => {
    const server = net.createServer((s) => {
      s.on('error', () => {});
      s.once('data', () => {
        const f = frames(100_000, 600);
        f.splice(256, 256);
        s.end(Buffer.concat([...f, encodeTrailer(600 * 100_004, 600)]));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const blast = sockbuf([
      'blast',
      'tcp',
      '--reverse',
      '--size',
      '100000',
      '--to',
      `127.0.0.1:${port}`,
      '--bytes',
      '60M',
      '--json',
    ]);
    try {
      assert.equal((await blast.exit).code, 1);
      const r = await blast.line((l) => l.event === 'result');
      assert.ok(Number(r.mismatches) > 0);
      assert.equal(r.errors, 1);
    } finally {
      blast.kill();
      server.close();
    }
  },
);

// issue 23 item 1: --verify given a stream it cannot check (nc, a Python socket: no sockbuf hello)
// says so and exits 1; before, it drained it and printed "0 mismatches", exit 0
test('sink tcp --verify: a plain stream from nc is reported as not verified, exit 1', T, async () => {
  const { sink, port } = await sinkOnce(['--verify']);
  try {
    const nc = await run('sh', ['-c', `head -c 1000000 /dev/zero | nc -N 127.0.0.1 ${port}`]);
    assert.equal(nc.code, 0);
    const conn = await sink.line((l) => l.event === 'connection');
    assert.equal(conn.bytes, 1_000_000, 'still counted to the byte');
    assert.match(String(conn.unverified), /plain stream/);
    const result = await sink.line((l) => l.event === 'result');
    assert.equal(result.unverified, 1);
    assert.equal(result.frames, 0);
    assert.equal((await sink.exit).code, 1);
  } finally {
    sink.kill();
  }
});

test(
  'sink tcp --verify: a Python socket sender is not verified, and the text output says so',
  T,
  async () => {
    const sink = spawn(
      process.execPath,
      [...SOCKBUF_ARGV, 'sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--verify'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let out = '';
      const port = await new Promise<number>((resolve, reject) => {
        sink.stdout.on('data', (d) => {
          out += d;
          const m = /listening on [^\n]*:(\d+)\n/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        sink.once('exit', () => reject(new Error(`sink exited: ${out}`)));
      });
      const py = `import socket;s=socket.create_connection(("127.0.0.1",${port}));s.sendall(b"hello, not sockbuf\\n"*1000);s.close()`;
      assert.equal((await run(PY, ['-c', py])).code, 0);
      const code = await new Promise((r) => sink.once('exit', r));
      assert.equal(code, 1, out);
      assert.match(out, /plain stream ended: .*; not verified: a plain stream/);
      assert.match(
        out,
        /result: 1 connections, .*0 frames verified, 0 mismatches, 1 connection NOT verified/,
      );
    } finally {
      sink.kill('SIGKILL');
    }
  },
);
