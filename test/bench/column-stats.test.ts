import assert from 'node:assert/strict';
import { test } from 'node:test';
import { columnStats, cvOf, median } from '../../src/bench/column-stats.js';
import { tables, textTable } from '../../src/bench/report/tables.js';

test('median of odd and even counts', () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7]), 7);
});

test('columnStats covers every numeric column and skips text and missing values', () => {
  const s = columnStats([
    { bytesPerSecond: 10, cc: 'cubic', lossPct: 0 },
    { bytesPerSecond: 30, cc: 'cubic' },
    { bytesPerSecond: 20, cc: 'cubic', lossPct: 2 },
  ]);
  assert.deepEqual(s.median, { bytesPerSecond: 20, lossPct: 1 });
  assert.deepEqual(s.min, { bytesPerSecond: 10, lossPct: 0 });
  assert.deepEqual(s.max, { bytesPerSecond: 30, lossPct: 2 });
});

test('CV: sample standard deviation ÷ mean in %, none under 2 values; the tcp table shows it when a point has repeats', () => {
  assert.equal(cvOf([10, 10, 10]), 0);
  assert.equal(cvOf([9, 11])?.toFixed(2), '14.14');
  assert.equal(cvOf([5]), undefined);
  assert.equal(cvOf(['x', 1]), undefined);
  const row = (values: number[]) => ({
    scenario: 'tcp',
    policy: 'auto',
    size: '8192',
    repeats: values.length,
    bytesPerSecond: { median: values[0], min: values[0], max: values[0], values },
  });
  const doc = (values: number[]) => ({
    schema: 'sockbuf.v1',
    host: { kernel: 'x' },
    params: {},
    results: [row(values)],
  });
  const [twice] = tables(doc([100e6, 110e6]) as never);
  assert.match(textTable(twice), /CV[\s\S]*6\.7 %/);
  const [once] = tables(doc([100e6]) as never);
  assert.doesNotMatch(textTable(once), /CV/);
});
