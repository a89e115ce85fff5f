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

// issue 23 item 3: in GRO rows the kernel counter counts coalesced messages, `dropped` datagrams; the
// table shows both in their own columns so that a reader can add up dropped = kernel + userspace +
// truncated on every row (before, kernel showed 167 861 GRO messages beside 10 792 256 dropped)
test('UDP ladder: dropped = kernel + userspace + truncated on every row, GRO messages in a column of their own', () => {
  const [doc] = loadResults(['test/fixtures/results-quick.json']);
  const t = tables(doc).find((x) => x.scenario === 'udp');
  assert.ok(t);
  const col = (label: string) => {
    const c = t.columns.find((x) => x.label === label);
    assert.ok(c, `a column '${label}' in ${t.columns.map((x) => x.label)}`);
    return (r: (typeof t.rows)[number]) => Number(c.get(r) ?? 0);
  };
  const [dropped, kernel, userspace, truncated] = ['dropped', 'kernel', 'userspace', 'truncated'].map(col);
  const gro = col('kernel GRO msgs');
  assert.ok(t.rows.length > 5);
  for (const r of t.rows)
    assert.equal(kernel(r) + userspace(r) + truncated(r), dropped(r), JSON.stringify(r.path));
  const g = t.rows.find((r) => r.kernelDropsUnit === 'gro-messages');
  assert.ok(g);
  assert.equal(gro(g), 167_861);
  assert.equal(kernel(g), 10_792_256 - 49_152);
  assert.equal(gro(t.rows.find((r) => r.gro === false) ?? g), 0, 'no GRO message count without GRO');
  assert.match(textTable(t), /kernel GRO msgs/);
  assert.match(t.title, /in datagrams: dropped = kernel \+ userspace \+ truncated/);
});
