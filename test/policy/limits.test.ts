import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { checkWhole, LIMITS } from '../../src/policy/limits.js';
import { checkParam } from '../../src/serve/request.js';

test('checkWhole: a whole number within the declared range, as a number or a string; else a UsageError naming the option', () => {
  assert.equal(checkWhole('parallel', 128), 128);
  assert.equal(checkWhole('batch', '64'), 64);
  for (const bad of [0, 129, 1.5, Number.NaN, '1e2', '0x10', '', 'many', null]) {
    assert.throws(
      () => checkWhole('parallel', bad, '--parallel'),
      (err: unknown) =>
        err instanceof UsageError &&
        err.option === '--parallel' &&
        err.expected === 'a whole number from 1 to 128' &&
        err.message.startsWith(`invalid value for --parallel: '${String(bad)}'`),
    );
  }
});

test("serve's wire bounds a whole-number parameter by the same declared range as the library", () => {
  const limits = { maxDurationSeconds: 60, maxBytes: 1e9 };
  for (const name of ['parallel', 'inflight', 'sockets', 'batch', 'flows'] as const) {
    const { max } = LIMITS[name];
    assert.equal(checkParam(name, 'whole', max, limits, 65507), max);
    assert.throws(() => checkParam(name, 'whole', max + 1, limits, 65507), new RegExp(`to ${max}`));
    assert.throws(() => checkParam(name, 'whole', String(max + 1), limits, 65507), new RegExp(`to ${max}`));
    assert.throws(() => checkWhole(name, max + 1), UsageError);
  }
});
