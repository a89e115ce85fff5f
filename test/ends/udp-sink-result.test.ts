// The accounting of sink udp's result (pure): counters decide without GRO, sequence numbers with it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { account } from '../../src/ends/udp-sink-result.js';
import type { SequenceReport } from '../../src/ends/udp-tracker.js';

const rep = (o: Partial<SequenceReport> = {}): SequenceReport => ({
  unique: 900,
  lost: 100,
  reordered: 0,
  duplicates: 0,
  jitterUs: 0,
  tailLost: 0,
  sent: 1000,
  flows: 1,
  trailers: { sent: 3, received: 3 },
  ...o,
});

test('without GRO: sent (data and trailers) = received + kernel + userspace + truncated, to the datagram', () => {
  const counters = { received: 903, kernelDrops: 60, userspaceDrops: 30, truncated: 10 };
  assert.deepEqual(account(false, rep(), counters), {
    by: 'counters',
    sent: 1003,
    accounted: 1003,
    unaccounted: 0,
  });
  assert.equal(account(false, rep(), { ...counters, kernelDrops: 59 }).unaccounted, 1);
  assert.equal(account(false, rep({ trailers: { sent: null, received: 0 } }), counters).unaccounted, null);
});

test('with GRO the kernel counts coalesced messages: the sequence numbers decide', () => {
  const counters = { received: 903, kernelDrops: 2 };
  assert.deepEqual(account(true, rep(), counters), {
    by: 'sequence-numbers',
    sent: 1000,
    accounted: 1000,
    unaccounted: 0,
  });
  assert.equal(account(true, rep({ sent: null }), counters).unaccounted, null);
});
