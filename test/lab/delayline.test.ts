// The delay line's ring size (pure): what the line can hold in flight, within the bounds a typed array takes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ringBytes } from '../../src/lab/delayline.js';

test('ringBytes: one delay at the cap plus the queue, at least 8 MiB, and at most 2 GiB whatever the RTT', () => {
  // 5 Gbit/s, 1 ms one way: 625 000 B in flight + the queue + 1 MiB of slack, below the 8 MiB floor
  assert.equal(ringBytes({ delayMs: 1, bitsPerSecond: 5e9, loss: 0, limitBytes: 1000 }), 8 << 20);
  // 1 Gbit/s, 100 ms one way: 12.5 MB + 1 MiB + the queue
  assert.equal(
    ringBytes({ delayMs: 100, bitsPerSecond: 1e9, loss: 0, limitBytes: 1 << 20 }),
    12_500_000 + (2 << 20),
  );
  // no cap and a 2 s RTT asked 5 GB (past what a Uint8Array takes: `lab up --rtt 2s` crashed)
  const big = ringBytes({ delayMs: 1000, bitsPerSecond: 0, loss: 0, limitBytes: 1 << 20 });
  assert.equal(big, 2 ** 31);
});
