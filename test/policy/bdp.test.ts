import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { ceiling, pinnedWindow, windowFor } from '../../src/policy/bdp.js';

test('ceiling = window × 8 / RTT', () => {
  // seed 000's stock limit: a pinned SO_RCVBUF clamped to rmem_max = 224 KiB at 2 ms
  assert.equal(ceiling(229376, 0.002), 917_504_000);
  assert.equal(ceiling(128 * 1024, 0.002), 524_288_000);
  assert.throws(() => ceiling(1, 0), UsageError);
});

test('windowFor = rate × RTT / 8, rounded up', () => {
  assert.equal(windowFor(10e9, 0.002), 2_500_000); // 10 Gbit/s at 2 ms needs 2.4 MiB
  assert.equal(windowFor(1, 1), 1);
  assert.equal(windowFor(5e9, 0.00161), 1_006_250);
  assert.throws(() => windowFor(1e9, -1), UsageError);
});

test('the two are inverse, and a pinned buffer gives half of what getsockopt reports', () => {
  const w = windowFor(3e9, 0.02);
  assert.ok(Math.abs(ceiling(w, 0.02) - 3e9) < 8 / 0.02);
  assert.equal(pinnedWindow(131072), 65536);
});
