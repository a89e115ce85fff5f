import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PatternSource, PatternVerifier } from '../../src/ends/pattern.js';
import { FrameDecoder } from '../../src/tcp/frame.js';

function streamOf(size: number, frames: number, piece: number): Buffer {
  const src = new PatternSource(size);
  const out: Buffer[] = [];
  let left = frames * (size + 4);
  while (left > 0) {
    const v = src.next(Math.min(piece, left));
    out.push(Buffer.from(v)); // copy: a test of content, not of identity
    left -= v.length;
  }
  return Buffer.concat(out);
}

for (const size of [0, 1, 250, 4000, 70_000]) {
  test(`blast's pattern decodes and verifies with 0 mismatches (size ${size})`, () => {
    const frames = 600; // past one 256-frame cycle
    const s = streamOf(size, frames, 7919);
    const v = new PatternVerifier();
    const dec = new FrameDecoder((p) => {
      v.check(p);
      return true;
    });
    for (let off = 0; off < s.length; off += 10_007) dec.push(s.subarray(off, off + 10_007));
    assert.equal(v.frames, frames);
    assert.equal(v.mismatches, 0);
    assert.equal(v.bytes, frames * size);
  });
}

test('byte i of frame n is (n + i) & 0xff', () => {
  const s = streamOf(5, 300, 1000);
  // frame 257 starts at 257 * 9; payload after the 4-byte header
  assert.deepEqual([...s.subarray(257 * 9 + 4, 257 * 9 + 9)], [1, 2, 3, 4, 5]);
  assert.equal(s.readUInt32BE(0), 5);
});

test('a flipped byte, a dropped frame and a repeated frame are mismatches', () => {
  for (const corrupt of [
    (f: Buffer[]) => {
      f[10][3] ^= 1;
    },
    (f: Buffer[]) => {
      f.splice(20, 1);
    },
    (f: Buffer[]) => {
      f.splice(30, 0, f[30]);
    },
  ]) {
    const size = 100;
    const s = streamOf(size, 100, 1 << 20);
    const frames: Buffer[] = [];
    for (let i = 0; i < 100; i++) frames.push(Buffer.from(s.subarray(i * 104 + 4, (i + 1) * 104)));
    corrupt(frames);
    const v = new PatternVerifier();
    for (const f of frames) v.check(f);
    assert.ok(v.mismatches > 0);
  }
});

test('the views it hands out are never written again', () => {
  const src = new PatternSource(1000);
  const first = src.next(50_000);
  const copy = Buffer.from(first);
  for (let i = 0; i < 100; i++) src.next(50_000);
  assert.ok(first.equals(copy));
});
