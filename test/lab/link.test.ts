import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultLimitBytes, LinkClock, PacketRing, superPacketLoss } from '../../src/lab/link.js';

test('without a rate cap a packet leaves one delay after it came', () => {
  const c = new LinkClock({ delayMs: 1, bitsPerSecond: 0, loss: 0, limitBytes: 0 });
  assert.equal(c.admit(10, 65000), 11);
  assert.equal(c.admit(10, 65000), 11);
  assert.equal(c.backlog(10), 0);
});

test('a rate cap serialises packets back to back, and a full queue drops', () => {
  // 8 Mbit/s = 1000 bytes per ms.
  const c = new LinkClock({ delayMs: 1, bitsPerSecond: 8e6, loss: 0, limitBytes: 2500 });
  assert.equal(c.admit(0, 1000), 2);
  assert.equal(c.admit(0, 1000), 3);
  assert.equal(c.backlog(0), 2000);
  assert.equal(c.admit(0, 1000), -1, 'the third packet does not fit in 2500 bytes of queue');
  assert.equal(c.admit(1.5, 1000), 4, 'the queue drained meanwhile');
  assert.equal(c.admit(10, 500), 11.5, 'an idle link starts at once');
});

test('a super-packet is lost when any of its segments would be', () => {
  assert.equal(superPacketLoss(0, 45), 0);
  assert.ok(Math.abs(superPacketLoss(0.01, 1) - 0.01) < 1e-12);
  assert.ok(Math.abs(superPacketLoss(0.01, 45) - (1 - 0.99 ** 45)) < 1e-12);
  assert.equal(superPacketLoss(1, 3), 1);
});

test('the default queue limit is two bandwidth-delay products, at least 1 MiB', () => {
  assert.equal(defaultLimitBytes(5e9, 2), 2_500_000);
  assert.equal(defaultLimitBytes(1e6, 2), 1 << 20);
});

test('the packet ring hands out contiguous slots, wraps, and refuses when full', () => {
  const r = new PacketRing(100, 30, 8);
  assert.equal(r.nextDue(), Number.POSITIVE_INFINITY);
  assert.equal(r.reserve(), 0);
  r.push(0, 30, 1);
  assert.equal(r.reserve(), 30);
  r.push(30, 30, 2);
  assert.equal(r.reserve(), 60);
  r.push(60, 30, 3);
  assert.equal(r.reserve(), -1, '10 bytes left at the end and nothing free at the start');
  r.bytes[0] = 7;
  assert.equal(r.peek()[0], 7);
  assert.equal(r.peek().length, 30);
  r.shift();
  r.shift();
  assert.equal(r.nextDue(), 3);
  assert.equal(r.reserve(), 0, 'wraps to the start once the oldest packets left');
  r.push(0, 20, 4);
  assert.equal(r.reserve(), 20, 'room before the oldest packet');
  r.push(20, 30, 5);
  assert.equal(r.reserve(), -1, 'the wrapped head would run into the oldest packet');
  r.shift();
  assert.equal(r.length, 2);
  assert.equal(r.nextDue(), 4);
  assert.equal(r.reserve(), 50);
});

test('the packet ring refuses beyond its entry capacity', () => {
  const r = new PacketRing(1000, 10, 2);
  r.push(r.reserve(), 10, 1);
  r.push(r.reserve(), 10, 2);
  assert.equal(r.reserve(), -1);
});
