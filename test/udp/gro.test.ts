import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groCount, splitGro } from '../../src/udp/gro.js';

/** A GRO message built by hand: `sizes` datagrams back to back, datagram k filled with byte k. */
function message(sizes: number[]): Buffer {
  return Buffer.concat(sizes.map((n, k) => Buffer.alloc(n, k & 0xff)));
}

for (const seg of [1, 64, 1200, 1472]) {
  for (const segments of [1, 2, 64]) {
    for (const lastShort of [false, true]) {
      if (lastShort && seg === 1) continue; // a 1-byte segment cannot have a shorter last one
      const sizes = Array.from({ length: segments }, (_, k) =>
        lastShort && k === segments - 1 ? Math.max(1, seg >> 1) : seg,
      );
      test(`GRO split: segment ${seg}, ${segments} segment(s)${lastShort ? ', short last' : ''}`, () => {
        const msg = message(sizes);
        const base = 4096;
        const offsets = new Uint32Array(80);
        const lengths = new Uint32Array(80);
        const n = splitGro(msg.length, segments === 1 && lastShort ? 0 : seg, base, offsets, lengths, 3);
        assert.equal(n, sizes.length);
        assert.equal(groCount(msg.length, seg), sizes.length);
        for (let k = 0; k < n; k++) {
          assert.equal(lengths[3 + k], sizes[k], `length of datagram ${k}`);
          const d = msg.subarray(offsets[3 + k] - base, offsets[3 + k] - base + lengths[3 + k]);
          assert.ok(
            d.every((b) => b === (k & 0xff)),
            `datagram ${k} holds its own bytes only`,
          );
        }
        assert.equal(offsets[2], 0, 'nothing written before `at`');
        assert.equal(lengths[3 + n], 0, 'nothing written after the last datagram');
      });
    }
  }
}

test('a message with no segment size, or not longer than one segment, is one datagram', () => {
  const o = new Uint32Array(2);
  const l = new Uint32Array(2);
  assert.equal(splitGro(1500, 0, 10, o, l, 0), 1);
  assert.deepEqual([o[0], l[0]], [10, 1500]);
  assert.equal(splitGro(0, 0, 20, o, l, 1), 1);
  assert.deepEqual([o[1], l[1]], [20, 0]);
  assert.equal(splitGro(64, 64, 0, o, l, 0), 1);
});
