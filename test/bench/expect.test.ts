import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeVerdict, evaluate, parseExpect } from '../../src/bench/expect.js';
import { UsageError } from '../../src/errors.js';

const grid = [
  {
    name: 'adaptive 64K',
    labels: { policy: 'adaptive', size: '64K' },
    median: { bytesPerSecond: 300, lossPct: 0 },
  },
  { name: 'data 64K', labels: { policy: 'data', size: '64K' }, median: { bytesPerSecond: 200, lossPct: 0 } },
  {
    name: 'adaptive 1M',
    labels: { policy: 'adaptive', size: '1M' },
    median: { bytesPerSecond: 220, lossPct: 1 },
  },
  { name: 'data 1M', labels: { policy: 'data', size: '1M' }, median: { bytesPerSecond: 200, lossPct: 0 } },
];

test('parseExpect reads terms, ratio, operator and number', () => {
  assert.deepEqual(parseExpect(' adaptive/data >= 1.3 '), {
    text: 'adaptive/data >= 1.3',
    left: { name: 'adaptive' },
    right: { name: 'data' },
    op: '>=',
    value: 1.3,
  });
  assert.deepEqual(parseExpect('lossPct[64K]<=0').left, { name: 'lossPct', label: '64K' });
  assert.equal(parseExpect('x != -2e3').value, -2000);
});

test('bad expressions are usage errors naming --expect', () => {
  for (const bad of ['adaptive/data', 'a/b/c > 1', 'a[b > 1', '>= 1', 'a >= fast']) {
    assert.throws(
      () => parseExpect(bad),
      (e: Error) => e instanceof UsageError && e.option === 'expect' && /for expect:/.test(e.message),
      bad,
    );
  }
});

test('a label ratio pairs points that agree on the other labels, over the primary column', () => {
  const v = evaluate(parseExpect('adaptive/data >= 1.3'), grid, 'bytesPerSecond');
  assert.equal(v.ok, false);
  assert.deepEqual(
    v.checks.map((c) => [c.what, c.value, c.ok]),
    [
      ['bytesPerSecond[adaptive 64K] / bytesPerSecond[data 64K]', 1.5, true],
      ['bytesPerSecond[adaptive 1M] / bytesPerSecond[data 1M]', 1.1, false],
    ],
  );
  assert.match(describeVerdict(v)[1], /^UNMET --expect 'adaptive\/data >= 1.3': .* = 1.1 \(wanted >= 1.3\)/);
});

test('a bare column applies to every point; COLUMN[LABEL] to the labelled ones', () => {
  assert.equal(evaluate(parseExpect('lossPct <= 0'), grid).ok, false);
  assert.equal(evaluate(parseExpect('lossPct[64K] <= 0'), grid).ok, true);
  assert.equal(evaluate(parseExpect('bytesPerSecond[1M]/bytesPerSecond[64K] < 1'), grid).checks.length, 2);
});

test('names that match nothing are usage errors', () => {
  assert.throws(
    () => evaluate(parseExpect('fast/data > 1'), grid, 'bytesPerSecond'),
    /no point is labelled 'fast'/,
  );
  assert.throws(() => evaluate(parseExpect('adaptive > 1'), grid), /no primary column/);
  assert.throws(() => evaluate(parseExpect('rttUs[64K] > 1'), grid), /no column 'rttUs'/);
  assert.throws(() => evaluate(parseExpect('adaptive/64K > 1'), grid, 'bytesPerSecond'), /pair with/);
});
