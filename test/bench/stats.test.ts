import assert from 'node:assert/strict';
import { test } from 'node:test';
import { columnStats, median } from '../../src/bench/stats.js';

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
