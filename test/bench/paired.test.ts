import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatJudged, judgeRatio, medianInterval, perRound } from '../../src/bench/paired.js';

test('the median interval from order statistics: 2nd to 8th of 9 (96 %), the whole range below 5 values', () => {
  const nine = [9, 1, 8, 2, 7, 3, 6, 4, 5];
  const m = medianInterval(nine);
  assert.deepEqual([m.median, m.lo, m.hi, m.n], [5, 2, 8, 9]);
  assert.ok(Math.abs(m.level - (1 - 20 / 512)) < 1e-12, `coverage ${m.level}`);
  // 20 values: the 6th to the 15th (1 − 2·P(Bin(20, ½) ≤ 5) = 95.9 %; the 7th would be 88.5 %)
  const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
  const t = medianInterval(twenty);
  assert.deepEqual([t.median, t.lo, t.hi], [10.5, 6, 15]);
  const few = medianInterval([3, 1, 2]);
  assert.deepEqual([few.median, few.lo, few.hi], [2, 1, 3]);
  assert.ok(few.level < 0.9, 'three values cannot give 90 %');
  assert.ok(Number.isNaN(medianInterval([]).median));
});

test('a ratio is judged by its median unless its interval reaches past ±20 %: too noisy', () => {
  assert.deepEqual(perRound([2, 4, 6], [1, 2, 4, 8]), [2, 2, 1.5]);
  const steady = judgeRatio([0.92, 0.95, 0.93, 0.97, 0.94, 0.96, 0.91, 0.95, 0.94], 0.9);
  assert.equal(steady.verdict, 'met');
  assert.equal(formatJudged(steady), '0.94 [0.92–0.96] (goal ≥ 0.90): met');
  assert.equal(judgeRatio([0.85, 0.86, 0.84, 0.85, 0.87, 0.85, 0.86, 0.84, 0.85], 0.9).verdict, 'not met');
  // one wild round of nine is outside the interval; two on the same side are not
  assert.equal(judgeRatio([1, 1, 1, 1, 1, 1, 1, 1, 3], 0.9).verdict, 'met');
  const wild = judgeRatio([1, 1, 1, 1, 1, 1, 1, 1.3, 3], 0.9);
  assert.equal(wild.verdict, 'too noisy');
  assert.match(formatJudged(wild), /too noisy, rerun$/);
});
