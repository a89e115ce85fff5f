// `sockbuf sink udp` / `blast udp` as child processes of the built CLI (dist/, as npm test builds it):
// this also proves that the reader thread loads from dist as well as from src under tsx.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { test } from 'node:test';

const CLI = new URL('../../dist/cli/main.js', import.meta.url).pathname;

function start(args: string[]): {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** Every stdout line (the table of a run without --json). */
  text: string[];
  exit: Promise<number>;
} {
  assert.ok(existsSync(CLI), 'dist/ is built (npm run build)');
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const text: string[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    text.push(l);
    if (l.startsWith('{')) lines.push(JSON.parse(l));
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exit = new Promise<number>((resolve) =>
    child.on('close', (code) => {
      (child as ChildProcess & { stderrText?: string }).stderrText = stderr;
      resolve(code ?? -1);
    }),
  );
  return { child, lines, text, exit };
}

const stderrOf = (c: ChildProcess) => (c as ChildProcess & { stderrText?: string }).stderrText ?? '';

async function ready(lines: Record<string, unknown>[]): Promise<Record<string, unknown>> {
  for (let i = 0; i < 500; i++) {
    const r = lines.find((l) => l.event === 'ready');
    if (r) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('no ready line');
}

for (const receiver of ['batch', 'dgram']) {
  test(`sink udp --receiver ${receiver} and blast udp: JSON lines, every datagram accounted for`, async () => {
    const sink = start([
      'sink',
      'udp',
      '--listen',
      '127.0.0.1:0',
      '--receiver',
      receiver,
      '--idle',
      '500ms',
      '--json',
    ]);
    const r = await ready(sink.lines);
    assert.equal(r.receiver, receiver);
    const blast = start([
      'blast',
      'udp',
      '--to',
      `127.0.0.1:${r.port}`,
      '--rate',
      '20k',
      '--duration',
      '500ms',
      '--json',
    ]);
    assert.equal(await blast.exit, 0, stderrOf(blast.child));
    assert.equal(await sink.exit, 0, stderrOf(sink.child));
    const sent = blast.lines.find((l) => l.event === 'result') as Record<string, number>;
    const got = sink.lines.find((l) => l.event === 'result') as Record<string, number>;
    assert.ok(sent.sent > 0);
    assert.equal(got.sent, sent.sent, 'the trailer told the sink how many were sent');
    assert.equal(got.received + got.lost, sent.sent);
    assert.equal(got.duplicates, 0);
    assert.equal(got.tailLost, 0);
    if (receiver === 'batch') {
      assert.equal(got.received + got.kernelDrops + got.userspaceDrops + got.truncated, sent.sent);
      assert.ok(got.jsCallsPerDatagram < 1);
    } else assert.equal(got.jsCallsPerDatagram, 1);
  });
}

test('sink udp on a port in use exits 3 with the reason', async () => {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
  try {
    const sink = start(['sink', 'udp', '--listen', `127.0.0.1:${s.address().port}`, '--duration', '1s']);
    assert.equal(await sink.exit, 3);
    assert.match(stderrOf(sink.child), /EADDRINUSE/);
  } finally {
    s.close();
  }
});

test('blast udp with a bad --rate exits 2 naming the option and value', async () => {
  const blast = start(['blast', 'udp', '--to', '127.0.0.1:9', '--rate', 'lots']);
  assert.equal(await blast.exit, 2);
  assert.match(stderrOf(blast.child), /--rate: 'lots'/);
});

// issue 23 item 2: any arrival counts as activity for --idle, a truncated datagram too (before, the
// sink saw truncated 1, received 0 and never ended)
test('sink udp --idle 1s --slot 2048 ends after one oversize datagram (truncated 1, received 0)', async () => {
  const sink = start(['sink', 'udp', '--listen', '127.0.0.1:0', '--slot', '2048', '--idle', '1s', '--json']);
  const killer = setTimeout(() => sink.child.kill('SIGKILL'), 20_000);
  try {
    const r = await ready(sink.lines);
    const s = dgram.createSocket('udp4');
    await new Promise<void>((res) => s.send(Buffer.alloc(4000, 7), Number(r.port), '127.0.0.1', () => res()));
    s.close();
    const code = await sink.exit;
    assert.equal(code, 0, `ended by itself: ${stderrOf(sink.child)}`);
    const result = sink.lines.find((l) => l.event === 'result');
    assert.equal(result?.truncated, 1, JSON.stringify(result));
    assert.equal(result?.received, 0);
  } finally {
    clearTimeout(killer);
    sink.child.kill('SIGKILL');
  }
});

// issue 23 item 6: a pace the sender cannot keep is said, asked against reached, in the JSON, the
// table and a warning line (before, the result gave the rate reached alone)
test('blast udp at a rate no sender reaches says the pace was not kept: JSON, table and one warning line', async () => {
  const s = dgram.createSocket('udp4'); // bound, never read: the kernel drops what does not fit
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
  const to = `127.0.0.1:${s.address().port}`;
  const children: ChildProcess[] = [];
  const killer = setTimeout(() => {
    for (const c of children) c.kill('SIGKILL');
  }, 30_000);
  const run = (a: string[]) => {
    const r = start(a);
    children.push(r.child);
    return r;
  };
  try {
    const args = ['blast', 'udp', '--to', to, '--rate', '1000M', '--duration', '300ms'];
    const json = run([...args, '--json']);
    assert.equal(await json.exit, 0, stderrOf(json.child));
    const r = json.lines.find((l) => l.event === 'result') as Record<string, unknown>;
    assert.equal(r.askedDatagramsPerSecond, 1e9);
    assert.equal(r.paceKept, false);
    assert.ok((r.datagramsPerSecond as number) < 1e9);
    const warnings = stderrOf(json.child).split('\n').filter(Boolean);
    assert.equal(warnings.length, 1, stderrOf(json.child));
    assert.match(
      warnings[0],
      /^sockbuf: warning: blast udp reached \d+ datagrams\/s of the 1000000000 asked \(\d+ %\): the sender's CPU could not keep up$/,
    );
    const table = run(args);
    assert.equal(await table.exit, 0, stderrOf(table.child));
    assert.match(table.text.join('\n'), /^asked +1000000000 datagrams\/s: NOT kept \(\d+ % reached\)$/m);
    assert.match(
      stderrOf(table.child),
      /^sockbuf: warning: blast udp reached \d+ datagrams\/s of the 1000000000 asked/,
    );
    // a pace that is kept: no warning, paceKept true
    const kept = run(['blast', 'udp', '--to', to, '--rate', '2k', '--duration', '300ms', '--json']);
    assert.equal(await kept.exit, 0);
    const k = kept.lines.find((l) => l.event === 'result') as Record<string, unknown>;
    assert.equal(k.askedDatagramsPerSecond, 2000);
    assert.equal(k.paceKept, true, JSON.stringify(k));
    assert.equal(stderrOf(kept.child), '');
  } finally {
    clearTimeout(killer);
    s.close();
  }
});

// issue 37: runs that cannot be what was asked said so: each of these exited 0 (or ran silently
// without GSO, or ignored --slot) before
test('blast udp: a run that sent nothing, or into a closed port, exits 1 saying why; --gso on with a size GSO cannot send is refused', async () => {
  const { spawnSync } = await import('node:child_process');
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
  const none = cli('blast', 'udp', '--to', '127.0.0.1:9', '--rate', '1', '--duration', '100ms');
  assert.equal(none.status, 1, none.stderr);
  assert.match(none.stderr, /no datagram was sent in --duration 100 ms .*nothing was measured/);
  assert.match(none.stdout, /NOT kept/);
  // a port nothing listens on: the kernel reports the ICMP refusals on later sends
  const closed = dgram.createSocket('udp4');
  await new Promise<void>((r) => closed.bind(0, '127.0.0.1', () => r()));
  const port = closed.address().port;
  closed.close();
  const refused = cli('blast', 'udp', '--to', `127.0.0.1:${port}`, '--rate', '10k', '--duration', '300ms');
  assert.equal(refused.status, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /sending to the receiver at 127\.0\.0\.1:\d+: \d+ sends were refused \(ECONNREFUSED\), so what was sent went nowhere; nothing listens there \(is the receiver running, on that port\?\)/,
  );
  const gso = cli(
    'blast',
    'udp',
    '--to',
    '127.0.0.1:9',
    '--gso',
    'on',
    '--size',
    '64000',
    '--duration',
    '100ms',
  );
  assert.equal(gso.status, 2);
  assert.match(gso.stderr, /^sockbuf: --gso on cannot send --size 64000: GSO needs/);
  const slot = cli('sink', 'udp', '--listen', '127.0.0.1:0', '--receiver', 'dgram', '--slot', '1024');
  assert.equal(slot.status, 2);
  assert.match(slot.stderr, /--receiver dgram and --slot cannot be combined/);
});
