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
  assert.match(v[2].text, /adaptive:max256K 2\.97 GB\/s = 1\.38 × node 'data' = 0\.99 × the best fixed/);
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

test("seed 002 not reproduced under 0.9 × the best fixed; the verdict says when that gap is within the runs' spread", () => {
  const drain = (reader: string, values: number[]) => ({
    scenario: 'drain',
    reader,
    bytesPerSecond: { median: [...values].sort((a, b) => a - b)[values.length >> 1], values },
  });
  const at = (adaptive: number[], fixed: number[]) =>
    verdicts({
      ...doc,
      results: [
        drain('data', [1e9, 1e9, 1e9]),
        drain('fixed:64K', fixed),
        drain('adaptive:max256K', adaptive),
      ],
    }).find((v) => v.seed === '002') as SeedVerdict;
  // 0.85 × with the runs spread by ~25 %: not reproduced, and said to be within the spread
  const noisy = at([1.7e9, 1.2e9, 2.0e9], [2.0e9, 1.6e9, 2.4e9]);
  assert.equal(noisy.status, 'not reproduced');
  assert.match(
    noisy.text,
    /0\.85 × the best fixed \(fixed:64K 2\.00 GB\/s\); .*the gap to 0\.9 × is within the runs' spread \(CV up to 25 %\)/,
  );
  // the same medians with tight runs: a plain loss, nothing about spread
  const tight = at([1.69e9, 1.7e9, 1.71e9], [1.99e9, 2.0e9, 2.01e9]);
  assert.equal(tight.status, 'not reproduced');
  assert.doesNotMatch(tight.text, /spread/);
  // reproduced: nothing about spread either
  assert.doesNotMatch(at([2.0e9, 1.5e9, 2.4e9], [2.0e9, 1.6e9, 2.4e9]).text, /spread/);
});

test("seed 002 with the sender ≥ 85 % busy in both: judged on the readers' GB per CPU-second, with the same 0.9 margin", () => {
  const drain = (reader: string, rate: number, senderBusy: number, cpu: number) => ({
    scenario: 'drain',
    reader,
    bytesPerSecond: { median: rate, values: [rate, rate, rate] },
    senderBusy: { median: senderBusy },
    receiverCpuNsPerByte: { median: cpu },
  });
  const at = (busyAdaptive: number, busyFixed: number, rate = 2.0e9, cpu = 0.3) =>
    verdicts({
      ...doc,
      results: [
        drain('data', 0.6e9, 0.3, 1.7),
        drain('fixed:8K', 1.5e9, 0.9, 0.7),
        drain('fixed:64K', 2.4e9, busyFixed, 0.33),
        drain('adaptive:max1M', rate, busyAdaptive, cpu),
      ],
    }).find((v) => v.seed === '002') as SeedVerdict;
  // 0.83 × on the rate, which is the sender's: the adaptive reader costs less per byte
  const bound = at(0.95, 0.92);
  assert.equal(bound.status, 'reproduced');
  assert.match(
    bound.text,
    /0\.83 × the best fixed .*the sender was 95 % and 92 % busy, so the rates are the sender's and the readers are judged on their cost: adaptive:max1M 3\.33 GB per CPU-second = 1\.10 × the cheapest fixed \(fixed:64K 3\.03\)/,
  );
  // a tie on the rate, but the adaptive reader costs more per byte (its CPU polling): not reproduced
  const costly = at(0.95, 0.92, 2.4e9, 0.45);
  assert.equal(costly.status, 'not reproduced');
  assert.match(costly.text, /= 0\.73 × the cheapest fixed/);
  // a sender with time to spare: the rates rank the readers, nothing is said about CPU
  const free = at(0.95, 0.8);
  assert.equal(free.status, 'not reproduced');
  assert.doesNotMatch(free.text.split(' (criterion')[0], /busy|CPU/);
});
