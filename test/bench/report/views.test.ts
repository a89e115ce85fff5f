import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadResults } from '../../../src/bench/report/results.js';
import { tables, textTable } from '../../../src/bench/report/tables.js';
import { fmtNumber } from '../../../src/bench/report/views.js';

test('numbers for people', () => {
  assert.equal(fmtNumber(1234567), '1,234,567');
  assert.equal(fmtNumber(12.345), '12.3');
  assert.equal(fmtNumber(1.2345), '1.23');
  assert.equal(fmtNumber(0.01234), '0.012');
});

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
