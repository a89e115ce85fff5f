// The hostile sweep over what peers send to the running ends: `sockbuf serve`'s control lines,
// iperf3's control messages to `sink tcp --iperf3`, UDP test headers and trailers to `sink udp`, and
// first bytes (hellos, frames) to `sink tcp --verify`: seeded, reproducible inputs over real loopback
// sockets to the built CLI. Each end must survive (or end by its own rules), take a good peer after
// the bad ones, account for every connection and datagram, print no raw control character and no
// stack trace, and leave no process behind.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { encodeHello } from '../../src/ends/hello.js';
import { COOKIE_BYTES } from '../../src/ends/iperf3/protocol.js';
import { DATA_MAGIC, TRAILER_MAGIC, writeHeader } from '../../src/ends/udp-header.js';
import { mutateBytes, mutateString, Rng } from './prng.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal raw
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/;
const ESC = '\u001b]0;pwned\u0007';
/** A connection's end line in sink tcp's text output (interval lines start with [conn N] too). */
const ENDED = /^\[conn \d+\][^\n]* ended: /gm;

export interface PeerReport {
  end: string;
  inputs: number;
  problems: string[];
  /** What the end said of them (refused, connections, datagrams …). */
  counts: Record<string, number>;
}

interface End {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function start(args: string[]): End {
  const child = spawn(process.execPath, [CLI, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    if (out.length < 4 << 20) out += d;
  });
  child.stderr?.on('data', (d) => {
    if (err.length < 4 << 20) err += d;
  });
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function until<T>(f: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Ends the end (SIGTERM, then its whole group SIGKILL after `ms`); the problems of its output. */
async function finish(e: End, ms = 10_000): Promise<string[]> {
  const problems: string[] = [];
  if (e.child.exitCode === null) e.child.kill('SIGTERM');
  const code = await Promise.race([e.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), ms))]);
  if (code === 'late') problems.push(`still running ${ms / 1000} s after SIGTERM`);
  try {
    process.kill(-(e.child.pid as number), 'SIGKILL');
    problems.push('processes of its group were left running');
  } catch {
    // the group is gone, as it should be
  }
  for (const [name, text] of [
    ['stdout', e.out()],
    ['stderr', e.err()],
  ]) {
    const m = RAW.exec(text);
    if (m) problems.push(`${name} carries a raw control character U+${m[0].charCodeAt(0).toString(16)}`);
  }
  if (/^\s+at .+:\d+:\d+\)?$/m.test(e.err())) problems.push(`a stack trace: ${e.err().slice(0, 300)}`);
  return problems;
}

/** Connects, writes `data`, reads for at most `ms`, closes; resolves to what came back. */
function exchange(port: number, data: Buffer[], ms: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1');
    const done = () => {
      s.destroy();
      resolve(Buffer.concat(chunks));
    };
    const t = setTimeout(done, ms);
    s.on('error', () => {});
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('close', () => {
      clearTimeout(t);
      resolve(Buffer.concat(chunks));
    });
    s.on('connect', () => {
      for (const d of data) s.write(d);
    });
  });
}

/** Runs `f(0 … n−1)` `parallel` at a time. */
async function pool(n: number, parallel: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) await f(i);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

const portOf = (text: string, re: RegExp) => {
  const m = re.exec(text);
  return m ? Number(m[1]) : undefined;
};

/** serve: `n` connections of hostile control lines, then a hello that must be answered. */
export async function serveSweep(n: number, seed = 'peers'): Promise<PeerReport> {
  const e = start(['serve', '--listen', '127.0.0.1:0', '--idle-timeout', '2s', '--max-duration', '5s']);
  const port = await until(() => portOf(e.out(), /listening on 127\.0\.0\.1:(\d+)/), 20_000);
  const counts: Record<string, number> = { connections: 0, lines: 0, replies: 0 };
  const problems: string[] = [];
  if (port === undefined)
    return { end: 'serve', inputs: 0, problems: [`no listening line: ${e.err()}`], counts };
  const VALID = [
    '{"v":1,"type":"hello"}',
    '{"v":1,"type":"done"}',
    '{"v":1,"type":"test","kind":"tcp","params":{"size":"128K","duration":"1s"}}',
    '{"v":1,"type":"test","kind":"udp","params":{"size":64,"rate":"1k"}}',
  ];
  await pool(n, 8, async (i) => {
    const rng = new Rng(seed, i);
    const lines: Buffer[] = [];
    for (let k = rng.range(1, 3); k > 0; k--) {
      const kind = rng.int(10);
      const line =
        kind === 0
          ? rng.bytes(rng.length(200))
          : kind === 1
            ? Buffer.from(`${'x'.repeat(70_000)}`)
            : Buffer.from(
                mutateString(rng, rng.pick(VALID), [
                  '\\u001b',
                  ESC,
                  '"',
                  '{',
                  '}',
                  '[]',
                  'null',
                  '1e999',
                  '-1',
                  '"x"',
                ]),
              );
      lines.push(line, Buffer.from('\n'));
      counts.lines++;
    }
    counts.connections++;
    const reply = await exchange(port, lines, 300);
    counts.replies += reply.toString().split('\n').filter(Boolean).length;
  });
  const hello = await exchange(port, [Buffer.from('{"v":1,"type":"hello"}\n')], 5000);
  if (!/"type":"hello"/.test(hello.toString()))
    problems.push(`no hello after the sweep: ${hello.toString().slice(0, 200)}`);
  problems.push(...(await finish(e)));
  return { end: 'serve', inputs: n, problems, counts };
}

/** sink tcp --iperf3: `n` hostile control connections (cookies, parameter documents), then a real iperf3 -c. */
export async function iperf3Sweep(n: number, seed = 'peers'): Promise<PeerReport> {
  const e = start(['sink', 'tcp', '--iperf3', '--listen', '127.0.0.1:0']);
  const port = await until(() => portOf(e.out(), /listening on 127\.0\.0\.1:(\d+)/), 20_000);
  const counts: Record<string, number> = { sessions: 0, refusedByServer: 0 };
  const problems: string[] = [];
  if (port === undefined)
    return { end: 'sink tcp --iperf3', inputs: 0, problems: [`no listening line: ${e.err()}`], counts };
  const VALID =
    '{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}';
  await pool(n, 8, async (i) => {
    const rng = new Rng(seed, i);
    const cookie = rng.chance(0.8)
      ? Buffer.from(`${rng.stringFrom('abcdefghijklmnopqrstuvwxyz234567', 36)}\0`)
      : rng.bytes(rng.range(1, COOKIE_BYTES + 5));
    const doc = Buffer.from(mutateString(rng, VALID, [ESC, '-1', '1e999', 'null', '[]', '"x"', '129', '0']));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(rng.chance(0.8) ? doc.length : rng.edgeU32());
    const parts = rng.chance(0.2)
      ? [cookie, mutateBytes(rng, Buffer.concat([len, doc]))]
      : [cookie, len, doc];
    const reply = await exchange(port, parts, 400);
    counts.sessions++;
    if (reply.length > 1) counts.refusedByServer++;
  });
  const iperf3 = spawnSync('iperf3', ['-c', '127.0.0.1', '-p', String(port), '-t', '1', '-J'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (iperf3.status !== 0)
    problems.push(
      `a real iperf3 -c after the sweep failed (${iperf3.status}): ${(iperf3.stdout + iperf3.stderr).slice(0, 300)}`,
    );
  problems.push(...(await finish(e)));
  return { end: 'sink tcp --iperf3', inputs: n, problems, counts };
}

/** sink udp: `n` datagrams with hostile headers and trailers; every one must be accounted for. */
export async function udpSweep(n: number, seed = 'peers'): Promise<PeerReport> {
  const e = start([
    'sink',
    'udp',
    '--listen',
    '127.0.0.1:0',
    '--gro',
    'off',
    '--warm-up',
    '0s',
    '--idle',
    '1s',
    '--json',
  ]);
  const ready = await until(
    () =>
      e
        .out()
        .split('\n')
        .find((l) => l.includes('"ready"')),
    20_000,
  );
  const counts: Record<string, number> = { sent: 0 };
  const problems: string[] = [];
  if (!ready) return { end: 'sink udp', inputs: 0, problems: [`no ready line: ${e.err()}`], counts };
  const port = (JSON.parse(ready) as { port: number }).port;
  const s = dgram.createSocket('udp4');
  const F64 = [
    0,
    1,
    -1,
    0.5,
    2 ** 53,
    2 ** 53 + 2,
    1e300,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2 ** 40,
    2 ** 40 + 1,
  ];
  for (let i = 0; i < n; i++) {
    const rng = new Rng(seed, i);
    const b = Buffer.alloc(rng.pick([8, 24, 28, 64, 1400]));
    if (b.length >= 24) {
      writeHeader(new DataView(b.buffer, b.byteOffset, b.length), 0, {
        magic: rng.chance(0.7) ? DATA_MAGIC : rng.chance(0.7) ? TRAILER_MAGIC : rng.u32(),
        flow: rng.chance(0.7) ? rng.int(3) : rng.u32(),
        seq: rng.chance(0.6) ? i : rng.pick(F64),
        sendUs: rng.chance(0.8) ? Date.now() * 1000 : rng.pick(F64),
        copies: b.length >= 28 ? rng.edgeU32() : undefined,
      });
    } else b.set(rng.bytes(b.length));
    await new Promise<void>((r) => s.send(b, port, '127.0.0.1', () => r()));
    counts.sent++;
    if (i % 64 === 63) await new Promise((r) => setTimeout(r, 1));
  }
  s.close();
  const code = await Promise.race([
    e.exited,
    new Promise<'late'>((r) => setTimeout(() => r('late'), 30_000)),
  ]);
  if (code === 'late') problems.push('still running 30 s after the last datagram (--idle 1s)');
  else if (code !== 0) problems.push(`exit ${code}: ${e.err().slice(0, 300)}`);
  const line = e
    .out()
    .split('\n')
    .find((l) => l.includes('"result"'));
  if (!line) problems.push('no result line');
  else {
    const r = JSON.parse(line) as Record<string, number & { received: number }>;
    const trailers = (r.trailers as unknown as { received: number }).received;
    // received counts every datagram taken but the trailers: the unsequenced ones are among them
    const taken = r.received + trailers;
    const accounted = taken + r.kernelDrops + r.userspaceDrops + r.truncated;
    Object.assign(counts, {
      received: r.received,
      trailers,
      unsequenced: r.unsequenced,
      kernelDrops: r.kernelDrops,
      accounted,
    });
    if (accounted !== n) problems.push(`${n} sent, ${accounted} accounted for`);
    for (const k of ['received', 'lost', 'reordered', 'duplicates', 'jitterUs', 'unsequenced'])
      if (!(typeof r[k] === 'number' && Number.isFinite(r[k]) && r[k] >= 0)) problems.push(`${k} = ${r[k]}`);
  }
  problems.push(...(await finish(e)));
  return { end: 'sink udp', inputs: n, problems, counts };
}

/** sink tcp --verify: `n` connections with hostile first bytes; every one reported, a good blast after. */
export async function helloSweep(n: number, seed = 'peers'): Promise<PeerReport> {
  const e = start(['sink', 'tcp', '--verify', '--listen', '127.0.0.1:0']);
  const port = await until(() => portOf(e.out(), /listening on 127\.0\.0\.1:(\d+)/), 20_000);
  const counts: Record<string, number> = { connections: 0 };
  const problems: string[] = [];
  if (port === undefined)
    return { end: 'sink tcp --verify', inputs: 0, problems: [`no listening line: ${e.err()}`], counts };
  const hello = encodeHello({ sockbuf: 1, test: 't', stream: 0, streams: 1, reverse: false, size: 1000 });
  await pool(n, 8, async (i) => {
    const rng = new Rng(seed, i);
    const first = rng.chance(0.7) ? mutateBytes(rng, hello) : rng.bytes(rng.length(100));
    const more = rng.chance(0.5) ? rng.bytes(rng.length(3000)) : Buffer.alloc(0);
    await exchange(port, [first, more], 200);
    counts.connections++;
  });
  // every connection is reported: one end line each
  const reported = await until(() => {
    const k = (e.out().match(ENDED) ?? []).length;
    return k >= n ? k : undefined;
  }, 20_000);
  counts.reported = reported ?? (e.out().match(ENDED) ?? []).length;
  if (counts.reported !== n) problems.push(`${n} connections, ${counts.reported} reported`);
  const blast = spawnSync(
    process.execPath,
    [CLI, 'blast', 'tcp', '--to', `127.0.0.1:${port}`, '--bytes', '1M', '--json'],
    { encoding: 'utf8', timeout: 30_000 },
  );
  if (blast.status !== 0)
    problems.push(`a good blast after the sweep failed (${blast.status}): ${blast.stderr.slice(0, 300)}`);
  problems.push(...(await finish(e)));
  return { end: 'sink tcp --verify', inputs: n, problems, counts };
}
