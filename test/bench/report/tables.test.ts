import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadResults } from '../../../src/bench/report/results.js';
import { tables, textTable } from '../../../src/bench/report/tables.js';
import { seedOfTable } from '../../../src/bench/seeds/index.js';

test('one table per scenario and placement, find-max apart, seed-style columns with the Δ vs auto', () => {
  const [doc] = loadResults(['test/fixtures/results-hand.json']);
  const t = tables(doc, (s) => seedOfTable(s)?.id);
  assert.deepEqual(
    t.map((x) => `${x.scenario}/${x.seed}`),
    ['drain/002', 'tcp/000', 'tcp/000', 'ping/001', 'udp/004', 'udp-max/004', 'streamer/003'],
  );
  const lab = textTable(t[2]);
  assert.match(lab, /\(lab, rtt 2 ms\)/);
  assert.match(lab, /rcvbuf:229376\s+8192\s+187\s+-69\.0 %/);
  assert.match(textTable(t[0]), /^data\s+2\.15\s+1\.9 %\s+1\.00 ×/m);
});

test('an unknown scenario gets a generic table of its parameters and unit-suffixed columns', () => {
  const [doc] = loadResults(['test/fixtures/results-hand.json']);
  const t = tables({
    ...doc,
    results: [{ scenario: 'idle', reader: 'adaptive', conns: 10000, heapBytesPerConnPct: 12.5 }],
  });
  assert.equal(t[0].seed, undefined);
  assert.match(
    textTable(t[0]),
    /reader\s+conns\s+heap bytes per conn pct\n[- ]+\nadaptive\s+10,000\s+12\.5 %/,
  );
});

// issue 23 item 3: in GRO rows the kernel counter counts coalesced messages, `dropped` datagrams; the
// table shows both in their own columns so that a reader can add up dropped = kernel + userspace +
// truncated on every row (before, kernel showed 167 861 GRO messages beside 10 792 256 dropped)
test('Δ vs auto compares a row only with an auto row of its own file, and a table names its file', () => {
  const row = (policy: string, file: string, mib: number) => ({
    scenario: 'tcp',
    policy,
    size: '8192',
    file,
    bytesPerSecond: mib * 2 ** 20,
  });
  const doc = loadResults(['test/fixtures/results-hand.json'])[0];
  const [t] = tables(
    {
      ...doc,
      results: [row('auto', 'a.json', 100), row('rcvbuf:229376', 'b.json', 50), row('auto', 'b.json', 200)],
    },
    () => '000',
    'merged',
  );
  const text = textTable(t);
  assert.match(text, /^\[seed 000\] TCP bulk: .* · from merged\n/);
  // against b.json's auto (200), not a.json's (100)
  assert.match(text, /rcvbuf:229376\s+8192\s+50\s+-75\.0 %/);
  const alone = tables({ ...doc, results: [row('auto', 'a.json', 100), row('rcvbuf:229376', 'b.json', 50)] });
  assert.ok(!alone[0].columns.some((c) => c.label === 'Δ vs auto'), 'no auto row in b.json: no Δ');
});

test('a scenario the report does not know shows its first 40 columns and says how many it leaves out', () => {
  const [doc] = loadResults(['test/fixtures/results-hand.json']);
  const wide = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`k${i}`, i]));
  const [t] = tables({ ...doc, results: [{ scenario: 'wide', ...wide }] });
  assert.equal(t.columns.length, 40);
  assert.match(textTable(t), /\n\(5 more columns not shown \(the whole rows are in --json\)\)$/);
});
