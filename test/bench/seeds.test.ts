import assert from 'node:assert/strict';
import { test } from 'node:test';
import { figureValue } from '../../src/bench/report/charts.js';
import type { SeedVerdict } from '../../src/bench/report/results.js';
import { loadResults } from '../../src/bench/report/results.js';
import { SEEDS, verdicts } from '../../src/bench/seeds/index.js';

const [doc] = loadResults(['test/fixtures/results-hand.json']);

test('one verdict per seed: reproduced, not reproduced or skipped with why, and the criterion', () => {
  const v = verdicts(doc);
  assert.deepEqual(
    v.map((x) => [x.seed, x.status]),
    [
      ['000', 'reproduced'],
      ['001', 'skipped'],
      ['002', 'reproduced'],
      ['003', 'skipped'],
      ['004', 'reproduced'],
    ],
  );
  assert.match(
    v[0].text,
    /^seed 000: reproduced — pinned rcvbuf 0\.31 × autotuned at 2 ms, rwnd-limited 99 %; seed: 0\.51 ×.*\(criterion: across the lab, pinned rcvbuf ≤ 0\.6 × autotuned/,
  );
  assert.equal(v[0].ok, true);
  assert.match(v[1].text, /^seed 001: skipped: judged across the lab, which did not run — .*1 in flight/);
  assert.equal(v[1].ok, undefined);
  assert.match(
    v[2].text,
    /adaptive:max256K 2\.97 GB\/s \(median of 9 rounds\); per round, median \[90 % interval\]: ÷ node:net 1\.56 \[1\.56–1\.56\] \(goal ≥ 1\.30\): met; ÷ the best fixed \(fixed:64K\) 0\.99 \[0\.99–0\.99\] \(goal ≥ 0\.95\): met/,
  );
  assert.match(
    v[3].text,
    /skipped: not measured at both of the thread's rates.*1 socket 14\.20 vs 8 sockets 2\.30/,
  );
  assert.match(v[4].text, /batch = 1\.38 × dgram, batch\+gro = 60\.53 × dgram/);
  assert.equal(v[4].ok, true, 'batch 0.0 % at the top rate where dgram loses 27 %');
});

test('seed 000 not reproduced when the pinned run is not rwnd-limited; 003 judged at both rates', () => {
  const lab = doc.results.map((r) =>
    r.scenario === 'tcp' && r.placement === 'lab' && r.policy !== 'auto' ? { ...r, rwndLimitedPct: 45 } : r,
  );
  assert.equal(verdicts({ ...doc, results: lab })[0].status, 'not reproduced');
  const streamer = (rate: string, sockets: string, ppb: number) => ({
    scenario: 'streamer',
    path: 'batch',
    rate,
    sockets,
    packetsPerBatch: ppb,
  });
  const at = (b8at27k: number) =>
    verdicts({
      ...doc,
      results: [
        streamer('3000', '1', 3.2),
        streamer('3000', '8', 1.1),
        streamer('27000', '1', 20),
        streamer('27000', '8', b8at27k),
      ],
    }).find((v) => v.seed === '003') as SeedVerdict;
  assert.equal(at(4).status, 'reproduced');
  assert.equal(at(12).status, 'not reproduced');
});

test('without the lab, seed 000 is skipped and says that loopback has no RTT; absent scenarios give no line', () => {
  const local = {
    ...doc,
    skipped: [],
    results: doc.results.filter((r) => r.placement !== 'lab' && r.scenario === 'tcp'),
  };
  const v = verdicts(local);
  assert.equal(v.length, 1);
  assert.match(
    v[0].text,
    /^seed 000: skipped: judged across the lab, which did not run — .*on loopback \(no RTT/,
  );
  assert.equal(v[0].ok, undefined);
  assert.equal(v[0].status, 'skipped');
  assert.deepEqual(verdicts({ ...doc, skipped: [], results: [] }), []);
});

test("seed figures carry a source line and their numbers are the seeds' own", () => {
  const fig = (id: string) => SEEDS.flatMap((s) => s.figures).find((f) => f.id === id);
  for (const s of SEEDS) for (const f of s.figures) assert.match(f.source, new RegExp(`^seed ${s.id}`));
  assert.equal(figureValue(fig('000-policy'), 'auto (the fix)'), 561.1);
  assert.equal(figureValue(fig('001-producer'), 100000, 'new (auto)'), 5950);
  assert.equal(figureValue(fig('004-loss'), 100000, 'netcat'), 61.59);
});

test("seed 001's variants A–D: a table per size when the ping ran with --write-hwms; the verdict compares A with B only", () => {
  const ping = (policy: string, size: string, hwm: string, rtps: number) => ({
    scenario: 'ping',
    placement: 'lab',
    policy,
    size,
    inflight: '64',
    hwm,
    roundTripsPerSecond: rtps,
  });
  const results = [
    ping('auto', '4000', 'default', 3000),
    ping('auto', '4000', '65536', 2900),
    ping('both:65535', '4000', 'default', 1000),
    ping('both:65535', '4000', '65536', 999),
    ping('auto', '100000', 'default', 500),
    ping('auto', '100000', '65536', 450),
    ping('both:65535', '100000', 'default', 100),
    ping('both:65535', '100000', '65536', 90),
  ];
  const seed = SEEDS.find((s) => s.id === '001');
  const d = { ...doc, results };
  const sum = seed?.summary?.(d);
  assert.ok(sum);
  assert.deepEqual(sum.rows, [
    ['4000', '3,000', '1,000', '999', '2,900', '3.00 ×', '2.90 ×'],
    ['100000', '500', '100', '90', '450', '5.00 ×', '5.00 ×'],
  ]);
  const v = verdicts(d).find((x) => x.seed === '001') as SeedVerdict;
  assert.equal(v.status, 'reproduced');
  assert.match(v.text, /4000 B 3\.00 ×.*100000 B 5\.00 ×/);
  // without --write-hwms there is no A–D table
  assert.equal(seed?.summary?.({ ...doc, results: results.map(({ hwm: _, ...r }) => r) }), undefined);
});

test("seed 004 is judged at the ladder's top rung both paths ran: 'max' when they ran it", () => {
  const udp = (path: string, rate: string, sent: number, received: number) => ({
    scenario: 'udp',
    path,
    rate,
    sent,
    received,
    dropped: sent - received,
    droppedPct: (100 * (sent - received)) / sent,
    sentPerSecond: sent,
  });
  const judge004 = (results: Record<string, unknown>[]) =>
    (verdicts({ ...doc, results } as never).find((v) => v.seed === '004') as SeedVerdict).status;
  const quiet = [udp('dgram', '100000', 100000, 100000), udp('batch', '100000', 100000, 100000)];
  // at 100000/s both keep up; at full speed node:dgram falls behind where batch does not
  assert.equal(
    judge004([...quiet, udp('dgram', 'max', 164000, 155600), udp('batch', 'max', 286000, 286000)]),
    'reproduced',
  );
  assert.equal(
    judge004([...quiet, udp('dgram', 'max', 164000, 164000), udp('batch', 'max', 286000, 286000)]),
    'not reproduced',
  );
});

test('seed 002 is judged on per-round ratios to the same round: a slow round weighs on both readers alike', () => {
  const drain = (reader: string, values: number[]) => ({
    scenario: 'drain',
    reader,
    bytesPerSecond: { median: [...values].sort((a, b) => a - b)[values.length >> 1], values },
  });
  // the host's speed swings 3 × from round to round; each reader's rate follows it
  const host = [1, 0.4, 0.9, 0.35, 1.1, 0.5, 1, 0.45, 0.8];
  const at = (adaptive: number, fixed: number, wobble = (_: number) => 1) =>
    verdicts({
      ...doc,
      results: [
        drain(
          'net',
          host.map((h) => 2e9 * h),
        ),
        drain(
          'fixed:16K',
          host.map((h) => 2.5e9 * h),
        ),
        drain(
          'fixed:64K',
          host.map((h, i) => fixed * h * wobble(i)),
        ),
        drain(
          'adaptive',
          host.map((h) => adaptive * h),
        ),
      ],
    }).find((v) => v.seed === '002') as SeedVerdict;
  // rates with CVs near 40 %, but every round says 1.6 × net and 0.97 × fixed:64K: judged, reproduced
  const ok = at(3.2e9, 3.3e9);
  assert.equal(ok.status, 'reproduced', ok.text);
  assert.match(
    ok.text,
    /÷ node:net 1\.60 \[1\.60–1\.60\] \(goal ≥ 1\.30\): met; ÷ the best fixed \(fixed:64K\) 0\.97/,
  );
  // 0.91 × the best fixed in every round: measured, and short of 0.95
  const short = at(3.0e9, 3.3e9);
  assert.equal(short.status, 'not reproduced');
  assert.equal(short.ok, false);
  assert.match(short.text, /÷ the best fixed \(fixed:64K\) 0\.91 \[0\.91–0\.91\] \(goal ≥ 0\.95\): NOT met/);
  // the best fixed reader's own runs scatter by ±40 % against the same round: no verdict, rerun
  const noisy = at(3.2e9, 3.3e9, (i) => [1, 1.4, 0.6, 1.4, 0.6, 1, 1.4, 0.6, 1][i]);
  assert.equal(noisy.status, 'too noisy');
  assert.equal(noisy.ok, false, 'the suite exits 1');
  assert.match(noisy.text, /^seed 002: too noisy, rerun \(no verdict\) — .*: too noisy, rerun/);
});

test('seed 002 without the node:net server measured: skipped, saying what it needs', () => {
  const v = verdicts({
    ...doc,
    results: doc.results.filter((r) => r.scenario === 'drain' && r.reader !== 'net'),
  }).find((x) => x.seed === '002') as SeedVerdict;
  assert.equal(v.status, 'skipped');
  assert.match(v.text, /needs the net reader and a fixed reader measured/);
});
