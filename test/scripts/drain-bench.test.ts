// scripts/drain-bench.ts, run briefly so it cannot rot (figures are the benchmark's business, not a
// test's: nothing here is timed). Needs dist/ (npm test builds first), gcc and taskset.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  C_NAME,
  drainBench,
  formatTable,
  NET_NAME,
  OTP_256K_NAME,
  OTP_NAME,
} from '../../scripts/drain-bench.js';
import { buildC } from '../../scripts/lib/pinned.js';
import { encodeHello } from '../../src/ends/hello.js';
import { which } from '../../src/sys/process.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

test('drain-bench runs C, sockbuf, node:net and OTP receivers on the same sender, rotated, and judges paired ratios', {
  timeout: 180_000,
}, async () => {
  const d = await drainBench([
    '--bytes',
    '24M',
    '--repeat',
    '3',
    '--readers',
    'adaptive,fixed:64K',
    '--framed',
  ]);
  const otp = which('escript') ? [OTP_NAME, OTP_256K_NAME] : [];
  const names = [C_NAME, 'sink adaptive', 'sink fixed:64K', NET_NAME, ...otp, 'sink adaptive framed'];
  assert.deepEqual(
    d.summary.map((s) => s.receiver),
    names,
  );
  if (!otp.length) assert.match(d.skipped.join('\n'), /no escript/);
  assert.equal(d.runs.length, 3 * names.length, 'every receiver in every round');
  // the order rotates: round 2 starts where round 1's second receiver was
  const order = (round: number) => d.runs.filter((r) => r.round === round).map((r) => r.receiver);
  assert.deepEqual(order(1), names);
  assert.deepEqual(order(2), [...names.slice(1), names[0]]);
  for (const r of d.runs) {
    assert.ok(r.bytes >= 24 * 1024 * 1024, `${r.receiver} read the whole stream (${r.bytes})`);
    assert.ok(r.bytesPerSecond > 0 && r.reads > 0, r.receiver);
    // the sender's CPU ÷ wall from connect to close: one thread cannot be busier than its wall time
    assert.ok(r.senderBusy > 0 && r.senderBusy <= 1.02, `${r.receiver}: sender busy ${r.senderBusy}`);
  }
  const framed = d.runs.find((r) => r.receiver === 'sink adaptive framed');
  const plain = d.runs.find((r) => r.receiver === 'sink adaptive');
  assert.ok(framed && plain && framed.bytes > plain.bytes, 'the framed stream carries the hello too');
  assert.equal(d.bestFixed, 'fixed:64K');
  // paired: per round, adaptive ÷ the C loop of that same round; the median of the three
  const rate = (name: string, round: number) =>
    d.runs.find((r) => r.receiver === name && r.round === round)?.bytesPerSecond ?? Number.NaN;
  const perRound = [1, 2, 3].map((k) => rate('sink adaptive', k) / rate(C_NAME, k)).sort((a, b) => a - b);
  const adaptive = d.summary.find((s) => s.receiver === 'sink adaptive');
  assert.ok(adaptive && Math.abs(adaptive.toC.median - perRound[1]) < 1e-12);
  assert.deepEqual(
    [adaptive.toC.lo, adaptive.toC.hi],
    [perRound[0], perRound[2]],
    'three rounds: the whole range',
  );
  assert.deepEqual(
    d.goals.map((g) => [g.against, g.goal]),
    [
      [C_NAME, 0.9],
      ['sink fixed:64K', 0.95],
      [NET_NAME, 1.3],
      ...(otp.length ? [[OTP_256K_NAME, 1]] : []),
      ['sink adaptive', 0.85],
    ],
  );
  for (const g of d.goals) assert.ok(['met', 'not met', 'too noisy'].includes(g.verdict));
  assert.equal(
    d.ok,
    d.goals.every((g) => g.verdict === 'met'),
  );
  const table = formatTable(d);
  assert.match(
    table,
    /sink adaptive ÷ C read\(\): \d+\.\d\d \[\d+\.\d\d–\d+\.\d\d\] \(goal ≥ 0\.90\): (met|NOT met|too noisy, rerun)/,
  );
  assert.match(table, /sink adaptive framed ÷ sink adaptive: /);
  assert.match(table, /sender busy/);
  assert.match(table, /load average/);
});

test("drain-bench --warm: each receiver reads the warm-up first, the rate is the sender's for the rest", {
  timeout: 120_000,
}, async () => {
  const MiB = 1024 * 1024;
  const d = await drainBench(['--bytes', '8M', '--warm', '16M', '--repeat', '1', '--readers', 'fixed:64K']);
  assert.equal(d.params.warm, 16 * MiB);
  for (const r of d.runs) {
    assert.ok(r.bytes >= 24 * MiB, `${r.receiver} read the warm-up and the rest (${r.bytes})`);
    // the rate and time are of what followed the warm-up (8 MiB in whole frames, and the trailer)
    const timed = r.bytesPerSecond * r.seconds;
    assert.ok(timed >= 8 * MiB && timed < 8.2 * MiB, `${r.receiver}: ${timed} bytes timed`);
  }
  assert.match(formatTable(d), /after 16777216 bytes of warm-up \(timed by the sender\)/);
});

test("the C sender's framed stream is blast's: sink tcp --verify finds every frame in place", {
  timeout: 60_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-drain-test-'));
  try {
    const bin = buildC(dir, 'tcp-drain');
    const frame = 4096;
    const hello = join(dir, 'hello');
    writeFileSync(
      hello,
      encodeHello({ sockbuf: 1, test: 't', stream: 0, streams: 1, reverse: false, size: frame }),
    );
    const sink = spawn(process.execPath, [
      CLI,
      'sink',
      'tcp',
      '--listen',
      '127.0.0.1:0',
      '--verify',
      '--once',
      '--json',
    ]);
    const lines: Record<string, unknown>[] = [];
    const ready = new Promise<number>((resolve) =>
      createInterface({ input: sink.stdout }).on('line', (l) => {
        const e = JSON.parse(l);
        lines.push(e);
        if (e.event === 'ready') resolve(e.port);
      }),
    );
    const exited = new Promise<number | null>((resolve) => sink.once('exit', resolve));
    const port = await ready;
    const sent = JSON.parse(
      execFileSync(bin, ['send', String(port), String(1 << 20), String(frame), hello], {
        timeout: 30_000,
      }).toString(),
    );
    assert.equal(await exited, 0, 'verified without a mismatch');
    const result = lines.find((e) => e.event === 'result');
    assert.equal(result?.frames, sent.frames, 'every data frame');
    assert.equal(result?.mismatches, 0);
    assert.equal(result?.errors, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
