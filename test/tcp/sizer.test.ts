import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { AdaptiveSizer } from '../../src/tcp/sizer.js';

const K = 1024;

test('full reads double the size up to max, never past it', () => {
  const s = new AdaptiveSizer({ min: 512, max: 256 * K });
  const seen = [s.size];
  for (let i = 0; i < 20; i++) {
    s.record(s.size);
    seen.push(s.size);
  }
  assert.deepEqual(seen.slice(0, 11), [
    512,
    1 * K,
    2 * K,
    4 * K,
    8 * K,
    16 * K,
    32 * K,
    64 * K,
    128 * K,
    256 * K,
    256 * K,
  ]);
  assert.equal(s.size, 256 * K);
  assert.equal(s.grows, 9);
  assert.equal(s.shrinks, 0);
});

test('a max that is not a power-of-two multiple of min is reached and respected', () => {
  const s = new AdaptiveSizer({ min: 1000, max: 5000 });
  for (let i = 0; i < 10; i++) s.record(s.size);
  assert.equal(s.size, 5000);
});

test('the EWMA has weight 1/8 and stays an integer', () => {
  const s = AdaptiveSizer.pinned(8000);
  assert.equal(s.average, 8000);
  s.record(0);
  assert.equal(s.average, 7000);
  s.record(0);
  assert.equal(s.average, 6125); // 7000 - 7000/8
  for (let i = 0; i < 200; i++) s.record(8000);
  assert.ok(Number.isInteger(s.average));
  assert.ok(Math.abs(s.average - 8000) <= 8, `converges to the read size (${s.average})`);
});

test('after a one-off burst it starts shrinking within a few reads and returns to min', () => {
  const s = new AdaptiveSizer({ min: 512, max: 256 * K });
  for (let i = 0; i < 50; i++) s.record(100); // a quiet connection: small reads
  assert.equal(s.size, 512);
  // a 1 MiB burst arrives at once: every read fills the buffer
  let burst = 1024 * K;
  while (burst > 0) {
    const n = Math.min(burst, s.size);
    s.record(n);
    burst -= n;
  }
  assert.equal(s.size, 256 * K);
  // back to small reads
  let reads = 0;
  while (s.shrinks === 0) {
    s.record(100);
    reads++;
  }
  assert.ok(reads <= 6, `first halving after ${reads} small reads`);
  let toMin = reads;
  while (s.size > 512) {
    s.record(100);
    toMin++;
    assert.ok(toMin < 100, 'reaches min');
  }
  assert.ok(toMin <= 48, `back at min after ${toMin} small reads`);
});

test('after a long bulk stream it still shrinks to min once reads are small', () => {
  const s = new AdaptiveSizer({ min: 512, max: 256 * K });
  for (let i = 0; i < 10_000; i++) s.record(s.size);
  let reads = 0;
  while (s.size > 512 && reads < 1000) {
    s.record(200);
    reads++;
  }
  assert.equal(s.size, 512, `shrank to min (${reads} reads)`);
});

test('mixed read sizes do not keep it from shrinking (the counter problem of seed 002)', () => {
  const s = new AdaptiveSizer({ min: 512, max: 256 * K });
  for (let i = 0; i < 12; i++) s.record(s.size);
  assert.equal(s.size, 256 * K);
  // mostly tiny reads with an occasional medium one: a counter of "consecutive small reads" would reset
  for (let i = 0; i < 200; i++) s.record(i % 5 === 0 ? 3000 : 50);
  assert.ok(s.size <= 4 * K, `settled near 4 × the average, got ${s.size}`);
});

test('steady reads of half the buffer neither grow nor shrink it', () => {
  const s = new AdaptiveSizer({ min: 512, max: 256 * K, initial: 64 * K });
  for (let i = 0; i < 500; i++) s.record(32 * K);
  assert.equal(s.size, 64 * K);
  assert.equal(s.grows + s.shrinks, 0);
});

test('it never goes below min', () => {
  const s = new AdaptiveSizer({ min: 4 * K, max: 64 * K, initial: 64 * K });
  for (let i = 0; i < 1000; i++) s.record(1);
  assert.equal(s.size, 4 * K);
});

test('a pinned size never changes', () => {
  const s = AdaptiveSizer.pinned(64 * K);
  for (let i = 0; i < 100; i++) s.record(s.size);
  for (let i = 0; i < 100; i++) s.record(1);
  assert.equal(s.size, 64 * K);
  assert.equal(s.grows + s.shrinks, 0);
  assert.ok(s.fixed);
});

test('bad bounds are usage errors naming the value', () => {
  assert.throws(
    () => new AdaptiveSizer({ min: 64 * K, max: 8 * K }),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /max=8192 is below min=65536/);
      return true;
    },
  );
  assert.throws(() => new AdaptiveSizer({ min: 0, max: 8 * K }), UsageError);
  assert.throws(() => new AdaptiveSizer({ min: 512, max: 2 ** 40 }), UsageError);
  assert.throws(
    () => new AdaptiveSizer({ min: 512, max: 8 * K, initial: 16 * K }),
    (e: unknown) => e instanceof UsageError && e.option === 'reader' && e.value === String(16 * K),
  );
});

test('size, grows and shrinks are read-only: only record() moves them', () => {
  const s = new AdaptiveSizer({ min: 64, max: 1024 });
  for (const field of ['size', 'grows', 'shrinks'] as const)
    assert.throws(() => {
      (s as unknown as Record<string, number>)[field] = 1;
    }, TypeError);
  s.record(64);
  assert.deepEqual([s.size, s.grows, s.shrinks], [128, 1, 0]);
});

test('limit(cap) bounds the growth for now and brings a larger size down at once; a fixed sizer ignores it', () => {
  const s = new AdaptiveSizer({ min: 512, max: 1 << 20 });
  s.limit(64 * 1024);
  for (let i = 0; i < 20; i++) s.record(s.size);
  assert.equal(s.size, 64 * 1024, 'full reads grow it to the cap, no further');
  assert.equal(s.ceiling, 64 * 1024);
  s.limit(256 * 1024);
  s.record(s.size);
  s.record(s.size);
  assert.equal(s.size, 256 * 1024);
  s.limit(32 * 1024);
  assert.equal(s.size, 32 * 1024, 'down to the new cap at once');
  s.limit(1 << 30);
  assert.equal(s.ceiling, 1 << 20, 'clamped to max');
  const f = AdaptiveSizer.pinned(8192);
  f.limit(1024);
  assert.equal(f.size, 8192);
});
