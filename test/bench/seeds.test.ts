import assert from 'node:assert/strict';
import { test } from 'node:test';
import { figureValue } from '../../src/bench/report/charts.js';
import { loadResults } from '../../src/bench/report/results.js';
import { SEEDS, verdicts } from '../../src/bench/seeds/index.js';

const [doc] = loadResults(['test/fixtures/results-hand.json']);

test('one verdict per seed, each naming the seed figure beside ours', () => {
  const v = verdicts(doc);
  assert.deepEqual(
    v.map((x) => x.seed),
    ['000', '001', '002', '003', '004'],
  );
  assert.match(
    v[0].text,
    /^seed 000: pinned rcvbuf 0\.31 × autotuned at 2 ms, rwnd-limited 99 % — seed: 0\.51 ×/,
  );
  assert.equal(v[0].ok, true);
  assert.match(v[2].text, /adaptive:max256K 2\.97 GB\/s = 1\.38 × node 'data'.*seed: 7\.5 vs 4\.2 GB\/s/);
  assert.match(
    v[3].text,
    /1 socket 14\.20 packets\/batch .* vs 8 sockets 2\.30 at 171 k\/s — seed: 1 socket ~3\.5 vs 8 sockets 1\.16/,
  );
  assert.match(v[4].text, /batch = 1\.38 × dgram, batch\+gro = 60\.53 × dgram/);
  assert.equal(v[4].ok, false, 'batch below the 1.5 × the UDP issue asks for');
});

test('without the lab, seed 000 says that loopback has no RTT; absent scenarios give no line', () => {
  const local = { ...doc, results: doc.results.filter((r) => r.placement !== 'lab' && r.scenario === 'tcp') };
  const v = verdicts(local);
  assert.equal(v.length, 1);
  assert.match(v[0].text, /on loopback \(no RTT/);
  assert.equal(v[0].ok, undefined);
  assert.deepEqual(verdicts({ ...doc, results: [] }), []);
});

test("seed figures carry a source line and their numbers are the seeds' own", () => {
  const fig = (id: string) => SEEDS.flatMap((s) => s.figures).find((f) => f.id === id);
  for (const s of SEEDS) for (const f of s.figures) assert.match(f.source, new RegExp(`^seed ${s.id}`));
  assert.equal(figureValue(fig('000-policy'), 'auto (the fix)'), 561.1);
  assert.equal(figureValue(fig('001-producer'), 100000, 'new (auto)'), 5950);
  assert.equal(figureValue(fig('004-loss'), 100000, 'netcat'), 61.59);
});
