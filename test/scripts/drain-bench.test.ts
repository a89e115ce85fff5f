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
import { drainBench, formatTable } from '../../scripts/drain-bench.js';
import { buildC } from '../../scripts/lib/pinned.js';
import { encodeHello } from '../../src/ends/hello.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

test('drain-bench runs C and sockbuf receivers on the same sender and prints the ratios', {
  timeout: 120_000,
}, async () => {
  const d = await drainBench(['--bytes', '24M', '--repeat', '2', '--readers', 'adaptive,fixed:64K,data']);
  assert.deepEqual(
    d.summary.map((s) => s.receiver),
    ['C read() 64K', 'sink adaptive', 'sink fixed:64K', 'sink data', 'sink adaptive framed'],
  );
  assert.equal(d.runs.length, 10, 'every receiver in every round');
  // C first in each round, then the readers in turn (alternating, not one receiver's runs in a row)
  assert.deepEqual(
    d.runs.map((r) => r.round),
    [1, 1, 1, 1, 1, 2, 2, 2, 2, 2],
  );
  for (const r of d.runs) {
    assert.ok(r.bytes >= 24 * 1024 * 1024, `${r.receiver} read the whole stream (${r.bytes})`);
    assert.ok(r.bytesPerSecond > 0 && r.reads > 0, r.receiver);
    // the sender's CPU ÷ wall from connect to close: one thread cannot be busier than its wall time
    assert.ok(r.senderBusy > 0 && r.senderBusy <= 1.02, `${r.receiver}: sender busy ${r.senderBusy}`);
  }
  const framed = d.runs.find((r) => r.receiver === 'sink adaptive framed');
  const plain = d.runs.find((r) => r.receiver === 'sink adaptive');
  assert.ok(framed && plain && framed.bytes > plain.bytes, 'the framed stream carries the hello too');
  assert.equal(d.ratios.bestFixed, 'fixed:64K');
  for (const v of [
    d.ratios.adaptiveVsC,
    d.ratios.adaptiveVsBestFixed,
    d.ratios.pairedAdaptiveVsBestFixed,
    d.ratios.framedVsPlain,
  ])
    assert.ok(Number.isFinite(v) && v > 0);
  for (const s of d.summary) assert.ok(s.pairedRatioToC > 0, s.receiver);
  // paired: per round, adaptive ÷ the best fixed reader of that same round; two rounds → their mean
  const rate = (name: string, round: number) =>
    d.runs.find((r) => r.receiver === name && r.round === round)?.bytesPerSecond ?? Number.NaN;
  const perRound = [1, 2].map((k) => rate('sink adaptive', k) / rate('sink fixed:64K', k));
  assert.ok(Math.abs(d.ratios.pairedAdaptiveVsBestFixed - (perRound[0] + perRound[1]) / 2) < 1e-9);
  const table = formatTable(d);
  assert.match(table, /adaptive \/ C read\(\) 64K: \d+\.\d\d \(goal ≥ 0\.90: (met|NOT met)\)/);
  assert.match(table, /adaptive framed \/ adaptive plain: /);
  assert.match(table, /sender busy/);
  // sender-bound is said exactly when both medians reach 90 %, and the CPU ratio is the two medians'
  const of = (name: string) => d.summary.find((s) => s.receiver === name);
  const [a, f] = [of('sink adaptive'), of('sink fixed:64K')];
  assert.ok(a && f);
  assert.equal(d.ratios.senderBound, Math.min(a.senderBusy, f.senderBusy) >= 0.9);
  assert.equal(/sender-bound:/.test(table), d.ratios.senderBound);
  assert.ok(Math.abs(d.ratios.cpuBestFixedVsAdaptive - f.cpuMsPerGB / a.cpuMsPerGB) < 1e-9);
  assert.match(table, /load average/);
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
