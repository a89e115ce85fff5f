// sink tcp / blast tcp as the user runs them: child processes over loopback, JSON lines, exit codes.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { encodeHello } from '../../src/ends/hello.js';
import { encodeFrame } from '../../src/tcp/frame.js';
import { SOCKBUF_ARGV } from './argv.js';

const children = new Set<ChildProcess>();

type Line = Record<string, unknown>;

function sockbuf(args: string[]) {
  const child = spawn(process.execPath, [...SOCKBUF_ARGV, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: Line[] = [];
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const waiters: ((l: Line) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    try {
      const v = JSON.parse(l) as Line;
      lines.push(v);
      for (const w of waiters.splice(0)) w(v);
    } catch {
      lines.push({ text: l });
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const ready = new Promise<Line>((resolve) => {
    const check = (l: Line) => (l.event === 'ready' ? resolve(l) : waiters.push(check));
    waiters.push(check);
  });
  return { child, lines, exited, ready, stderr: () => stderr };
}

const of = (lines: Line[], event: string) => lines.filter((l) => l.event === event);

test.after(() => {
  for (const c of children) c.kill('SIGKILL');
});

test('blast --bytes into sink --verify --once: every frame checked, 0 mismatches, both exit 0', {
  timeout: 60_000,
}, async () => {
  const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--verify', '--once', '--json']);
  const port = Number((await sink.ready).port);
  const blast = sockbuf([
    'blast',
    'tcp',
    '--to',
    `127.0.0.1:${port}`,
    '--bytes',
    '64M',
    '--size',
    '4000',
    '--json',
  ]);
  assert.equal(await blast.exited, 0, blast.stderr());
  assert.equal(await sink.exited, 0, sink.stderr());
  const conn = of(sink.lines, 'connection')[0];
  const result = of(sink.lines, 'result')[0];
  const frames = Math.ceil((64 * 1024 * 1024) / 4004);
  assert.equal(conn.frames, frames);
  assert.equal(conn.mismatches, 0);
  assert.equal(conn.error, undefined);
  assert.equal(result.mismatches, 0);
  const sent = of(blast.lines, 'result')[0];
  assert.equal(sent.bytes, frames * 4004);
  assert.ok(((conn.reader as Line).reads as number) > 0);
});

test('--parallel 3 and --reverse: the sink sends, waits for all streams, then exits', {
  timeout: 60_000,
}, async () => {
  const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--once', '--json']);
  const port = Number((await sink.ready).port);
  const blast = sockbuf([
    'blast',
    'tcp',
    '--to',
    `127.0.0.1:${port}`,
    '--bytes',
    '30M',
    '--parallel',
    '3',
    '--reverse',
    '--json',
  ]);
  assert.equal(await blast.exited, 0, blast.stderr());
  assert.equal(await sink.exited, 0, sink.stderr());
  const conns = of(sink.lines, 'connection');
  assert.equal(conns.length, 3);
  for (const c of conns) assert.equal(c.reverse, true);
  const r = of(blast.lines, 'result')[0];
  assert.equal(r.streams, 3);
  assert.ok((r.bytes as number) >= 30 * 1024 * 1024);
  assert.equal(
    r.bytes,
    conns.reduce((a, c) => a + (c.sentBytes as number), 0),
  );
});

test('bad input: --reader banana and max below min exit 2 naming the value; a port in use exits 3', {
  timeout: 60_000,
}, async () => {
  const banana = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--reader', 'banana']);
  assert.equal(await banana.exited, 2);
  assert.match(banana.stderr(), /--reader: 'banana'/);
  const minmax = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--reader', 'adaptive:min=64K,max=8K']);
  assert.equal(await minmax.exited, 2);
  assert.match(minmax.stderr(), /max=8192 is below min=65536/);
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as net.AddressInfo).port;
  const inUse = sockbuf(['sink', 'tcp', '--listen', `127.0.0.1:${port}`]);
  assert.equal(await inUse.exited, 3);
  assert.match(inUse.stderr(), /address already in use/);
  await new Promise((r) => busy.close(r));
  // nobody listens on that port now: a refused connection is the environment's answer, exit 3
  const refused = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--bytes', '1K']);
  assert.equal(await refused.exited, 3);
  assert.match(refused.stderr(), /ECONNREFUSED/);
  // the library names the option `listen`; the CLI prints its own flag
  const badPort = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:99999']);
  assert.equal(await badPort.exited, 2);
  assert.match(badPort.stderr(), /invalid value for --listen: '127.0.0.1:99999'/);
  // runTcpBlast refuses these combinations (named bytes/seconds, raw/reverse); the CLI says its flags
  const both = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--bytes', '1K', '--duration', '1s']);
  assert.equal(await both.exited, 2);
  assert.match(both.stderr(), /^sockbuf: give --bytes or --duration, not both$/m);
  const rawReverse = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--raw', '--reverse']);
  assert.equal(await rawReverse.exited, 2);
  assert.match(rawReverse.stderr(), /--raw and --reverse cannot be combined/);
  const many = sockbuf(['blast', 'tcp', '--to', `127.0.0.1:${port}`, '--parallel', '129']);
  assert.equal(await many.exited, 2);
  assert.match(
    many.stderr(),
    /invalid value for --parallel: '129' \(expected a whole number from 1 to 128\)/,
  );
});

async function peer(port: number): Promise<net.Socket> {
  const s = net.connect({ host: '127.0.0.1', port });
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  return s;
}

test('bad peers: a 4 GiB length prefix, a reset mid-frame, one byte a second; the sink survives all three', {
  timeout: 60_000,
}, async () => {
  const sink = sockbuf([
    'sink',
    'tcp',
    '--listen',
    '127.0.0.1:0',
    '--verify',
    '--interval',
    '500ms',
    '--json',
  ]);
  const port = Number((await sink.ready).port);
  const hello = (test: string) =>
    encodeHello({ sockbuf: 1, test, stream: 0, streams: 1, reverse: false, size: 100 });
  const waitConns = async (n: number) => {
    while (of(sink.lines, 'connection').length < n) await new Promise((r) => setTimeout(r, 20));
  };
  // 1. a 4 GiB length prefix after the hello
  const a = await peer(port);
  a.write(hello('a'));
  a.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]));
  await waitConns(1);
  assert.match(
    String(of(sink.lines, 'connection')[0].error),
    /frame length 4294967295 exceeds the maximum frame size 16777216/,
  );
  a.destroy();
  // 2. a reset in the middle of a frame
  const b = await peer(port);
  b.write(hello('b'));
  b.write(encodeFrame(Buffer.alloc(100_000)).subarray(0, 40_000));
  await new Promise((r) => setTimeout(r, 100));
  b.resetAndDestroy();
  await waitConns(2);
  assert.match(String(of(sink.lines, 'connection')[1].error), /ECONNRESET/);
  // 3. one byte a second, for 3 seconds, then the peer hangs up mid-frame
  const c = await peer(port);
  const stream = Buffer.concat([hello('c'), encodeFrame(Buffer.alloc(50, 1))]);
  c.write(stream.subarray(0, 12)); // the magic and the hello's length: a sockbuf connection
  for (let i = 12; i < 15; i++) {
    c.write(stream.subarray(i, i + 1));
    await new Promise((r) => setTimeout(r, 1000));
  }
  // a line for each interval in which a byte came (some of the six 500 ms intervals see none)
  const intervals = of(sink.lines, 'interval').filter((l) => l.conn === 3);
  assert.ok(intervals.length >= 2, `the sink kept reporting (${intervals.length} interval lines)`);
  assert.ok(
    intervals.every((l) => (l.readerSizeBytes as number) <= 512),
    'the reader stays at min for a trickle',
  );
  c.end();
  await waitConns(3);
  assert.match(String(of(sink.lines, 'connection')[2].error), /closed before a hello|middle of a frame/);
  // still serving, and SIGTERM ends it with a result line (errors found under --verify, but the
  // signal's exit wins: 143, as every command's)
  sink.child.kill('SIGTERM');
  assert.equal(await sink.exited, 143);
  const result = of(sink.lines, 'result')[0];
  assert.equal(result.connections, 3);
  assert.equal(result.errors, 3);
});

test('sink --echo (bench ping far end): frames answered as sent; a peer that never reads stalls it, bounded', {
  timeout: 60_000,
}, async () => {
  const both = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--echo', '--verify']);
  assert.equal(await both.exited, 2, '--echo with --verify is bad usage');
  assert.match(both.stderr(), /--echo and --verify cannot be combined/);
  const echo = sockbuf([
    'sink',
    'tcp',
    '--listen',
    '127.0.0.1:0',
    '--echo',
    '--once',
    '--rcvbuf',
    '64K',
    '--sndbuf',
    '64K',
    '--interval',
    '200ms',
    '--json',
  ]);
  const s = await peer(Number((await echo.ready).port));
  const chunks: Buffer[] = [];
  let got = 0;
  s.on('data', (d: Buffer) => {
    chunks.push(d);
    got += d.length;
  });
  // a frame cut across two writes, then two in one write
  const a = encodeFrame(Buffer.alloc(5000, 1));
  s.write(a.subarray(0, 3));
  await new Promise((r) => setTimeout(r, 50));
  s.write(Buffer.concat([a.subarray(3), encodeFrame(Buffer.from('hi')), encodeFrame(Buffer.alloc(0))]));
  const small = a.length + 6 + 4;
  while (got < small) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(
    Buffer.concat(chunks),
    Buffer.concat([a, encodeFrame(Buffer.from('hi')), encodeFrame(Buffer.alloc(0))]),
  );
  // 32 MiB of frames while this side reads nothing: the echo stops reading too, instead of queueing
  s.pause();
  const frame = encodeFrame(Buffer.alloc(4000, 2));
  const flood = Buffer.concat(Array.from({ length: 8192 }, () => frame));
  s.write(flood);
  const readByEcho = () =>
    of(echo.lines, 'interval').reduce((sum, l) => sum + ((l.bytes as number) ?? 0), 0) - small;
  // stalled: five intervals in a row with the connection idle (at most 15 s)
  for (let i = 0; i < 75; i++) {
    const iv = of(echo.lines, 'interval');
    if (iv.length >= 5 && iv.slice(-5).every((l) => l.idleConnections === 1)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(
    readByEcho() < 8 << 20,
    `the echo read ${readByEcho()} B of 32 MiB while its answers were not read`,
  );
  // read again: every frame comes back, then the echo ends with the connection (--once)
  s.resume();
  while (got < small + flood.length) await new Promise((r) => setTimeout(r, 20));
  assert.equal(got, small + flood.length);
  s.end();
  assert.equal(await echo.exited, 0, echo.stderr());
  const result = of(echo.lines, 'result')[0];
  assert.equal(result.frames, 3 + 8192);
  assert.equal(result.sentBytes, small + flood.length);
  assert.equal(result.errors, 0);
});

test('sink tcp: idle connections cost one interval line in all, not one each', {
  timeout: 60_000,
}, async () => {
  const sink = sockbuf(['sink', 'tcp', '--listen', '127.0.0.1:0', '--interval', '200ms', '--json']);
  const port = Number((await sink.ready).port);
  const idle = await Promise.all(Array.from({ length: 200 }, () => peer(port)));
  const busy = await peer(port);
  busy.write(encodeHello({ sockbuf: 1, test: 'busy', stream: 0, streams: 1, reverse: false, size: 100 }));
  // a loaded host may accept the 200 over several intervals: measure once the sink holds them all
  for (let i = 0; i < 150; i++) {
    const last = of(sink.lines, 'interval').findLast((l) => l.conn === undefined);
    if ((last?.idleConnections as number) >= 200) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const from = sink.lines.length;
  for (let i = 0; i < 5; i++) {
    busy.write(Buffer.alloc(1000));
    await new Promise((r) => setTimeout(r, 200));
  }
  const since = of(sink.lines.slice(from), 'interval');
  const perConn = since.filter((l) => l.conn !== undefined);
  assert.ok(
    perConn.every((l) => (l.bytes as number) > 0 || (l.reads as number) > 0),
    'a per-connection line only for a connection that moved',
  );
  assert.ok(perConn.length < 20, `${perConn.length} per-connection lines for 1 busy and 200 idle`);
  const counts = since.filter((l) => l.conn === undefined).map((l) => l.idleConnections);
  assert.ok(counts.length >= 3, `an idle count each interval (${counts.length})`);
  assert.ok(
    counts.slice(1).every((n) => n === 200 || n === 201),
    `idle counts: ${counts.join(' ')}`,
  );
  for (const s of [...idle, busy]) s.destroy();
  sink.child.kill('SIGTERM');
  assert.equal(await sink.exited, 143, sink.stderr());
});
