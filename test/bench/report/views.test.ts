import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadResults } from '../../../src/bench/report/results.js';
import { fmtNumber, tables, textTable } from '../../../src/bench/report/views.js';
import { seedOfTable } from '../../../src/bench/seeds/index.js';

test('numbers for people', () => {
  assert.equal(fmtNumber(1234567), '1,234,567');
  assert.equal(fmtNumber(12.345), '12.3');
  assert.equal(fmtNumber(1.2345), '1.23');
  assert.equal(fmtNumber(0.01234), '0.012');
});

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
  assert.match(textTable(t[0]), /^data\s+2\.15\s+1\.00 ×/m);
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
