// 10 000 seeded, reproducible inputs per target. A failure prints the seed and index to replay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFailures, fuzz } from './harness.js';
import { targets } from './targets.js';

const COUNT = Number(process.env.SOCKBUF_FUZZ_COUNT ?? 10_000);

for (const target of targets) {
  // the timeout is the hang detector, not a speed assertion: 10 000 inputs take well under a second
  // (targets whose inputs are megabytes run fewer: testCount)
  const count = Math.min(COUNT, target.testCount ?? COUNT);
  test(`fuzz ${target.name}: ${count} seeded inputs`, { timeout: 120_000 }, () => {
    const report = fuzz(target, { seed: 'sockbuf-ci', count });
    assert.equal(report.failures.length, 0, formatFailures(report));
    assert.equal(report.runs, count);
  });
}
