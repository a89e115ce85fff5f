import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bucketLabel,
  bucketOf,
  defaultEntries,
  entryOf,
  isFull,
  ringLayout,
  used,
} from '../../src/udp/ring.js';

test('ring indices survive int32 wrap-around', () => {
  const head = (2 ** 31 - 1 + 3) | 0; // wrapped to negative
  const tail = 2 ** 31 - 2;
  assert.equal(used(head, tail | 0), 4);
  assert.equal(isFull(head, tail | 0, 4), true);
  assert.equal(isFull(head, tail | 0, 5), false);
  assert.equal(entryOf(-1, 8), (2 ** 32 - 1) % 8);
  assert.equal(entryOf(9, 8), 1);
});

test('layout and default depth', () => {
  const l = ringLayout(8, 64, 65536, 64);
  assert.equal(l.maxDatagrams, 4096);
  assert.equal(l.batchBytes, 4 * 1024 * 1024);
  assert.equal(defaultEntries(64, 2048), 256);
  assert.equal(defaultEntries(64, 65536), 32);
  assert.equal(defaultEntries(1024, 65536), 4);
});

test('packets-per-batch histogram buckets are powers of two', () => {
  assert.deepEqual([1, 2, 3, 4, 63, 64, 4096].map(bucketOf), [0, 1, 1, 2, 5, 6, 12]);
  assert.equal(bucketLabel(0), '1');
  assert.equal(bucketLabel(6), '64-127');
});
