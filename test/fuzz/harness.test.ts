// The harness itself: it must catch what it promises to catch, and replay the same inputs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fuzz, measureAllocations, type Target } from './harness.js';
import { Rng } from './prng.js';

class Documented extends Error {}

const bytes: Target<Buffer> = {
  name: 'self.bytes',
  generate: (rng) => rng.bytes(rng.length(16)),
  run: (b) => {
    if (b.length > 0 && b[0] === 7) throw new TypeError('undocumented');
    if (b.length > 1 && b[1] === 9) throw new Documented('refused');
    return b.length;
  },
  allowed: (e) => e instanceof Documented,
};

test('the same seed gives the same inputs; another seed does not', () => {
  const a = Array.from({ length: 50 }, (_, i) => new Rng('s', i).bytes(8).toString('hex'));
  const b = Array.from({ length: 50 }, (_, i) => new Rng('s', i).bytes(8).toString('hex'));
  const c = Array.from({ length: 50 }, (_, i) => new Rng('t', i).bytes(8).toString('hex'));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

test('an undocumented error is a failure naming the index that replays it', () => {
  const r = fuzz(bytes, { seed: 'x', count: 2000, maxFailures: 1 });
  assert.equal(r.failures.length, 1);
  const f = r.failures[0];
  assert.match(f.problem, /TypeError: undocumented/);
  const replay = fuzz(bytes, { seed: 'x', first: f.index, count: 1 });
  assert.equal(replay.failures[0].input, f.input);
  assert.ok(r.rejected > 0, 'documented errors are counted, not failed');
});

test('an allocation the size of a claimed length is caught', () => {
  const greedy: Target<Buffer> = {
    name: 'self.greedy',
    generate: (rng) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(rng.edgeU32(), 0);
      return b;
    },
    run: (b) => Buffer.allocUnsafe(Math.min(b.readUInt32LE(0), 64 << 20)),
    allowed: () => false,
    maxAllocBytes: () => 1 << 20,
  };
  const r = fuzz(greedy, { count: 200, maxFailures: 1 });
  assert.match(r.failures[0]?.problem ?? '', /allocated \d+ bytes in one call/);
  assert.equal(measureAllocations(() => Buffer.concat([Buffer.alloc(3), Buffer.alloc(5)])).maxBytes, 8);
  // a typed array the size of a claim is seen too, and still is what it claims to be
  let keep: Uint8Array | undefined;
  assert.ok(measureAllocations(() => (keep = new Uint8Array(4 << 20))).maxBytes >= 4 << 20);
  assert.ok(keep instanceof Uint8Array && keep.length === 4 << 20);
  assert.ok(measureAllocations(() => new ArrayBuffer(3 << 20)).maxBytes >= 3 << 20);
  assert.equal(measureAllocations(() => new Uint8Array([1, 2, 3])).maxBytes, 0);
});

test('a broken property is a failure', () => {
  const r = fuzz({ ...bytes, allowed: () => true, check: () => assert.fail('nope') }, { count: 10 });
  assert.ok(r.failures.length > 0);
  assert.match(r.failures[0].problem, /property failed/);
});
