import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeTrailer, PatternSource, PatternVerifier } from '../../src/ends/pattern.js';
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

/** The payloads of a stream's frames (copies). */
function framesOf(size: number, n: number): Buffer[] {
  const s = streamOf(size, n, 1 << 20);
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) out.push(Buffer.from(s.subarray(i * (size + 4) + 4, (i + 1) * (size + 4))));
  return out;
}

function verify(size: number, frames: Buffer[], trailer?: Buffer): PatternVerifier {
  const v = new PatternVerifier(size);
  for (const f of frames) v.check(f);
  if (trailer) v.check(trailer.subarray(4));
  return v;
}

for (const size of [16, 17, 250, 4000, 70_000]) {
  test(`blast's pattern decodes and verifies with 0 mismatches, trailer agreeing (size ${size})`, () => {
    const frames = 600; // past one 256-frame cycle
    const s = Buffer.concat([streamOf(size, frames, 7919), encodeTrailer(frames * (size + 4), frames)]);
    const v = new PatternVerifier(size);
    const dec = new FrameDecoder((p) => {
      v.check(p);
      return true;
    });
    for (let off = 0; off < s.length; off += 10_007) dec.push(s.subarray(off, off + 10_007));
    assert.equal(v.frames, frames);
    assert.equal(v.mismatches, 0);
    assert.equal(v.bytes, frames * size);
    assert.equal(v.finish(), undefined);
  });
}

test('frame n carries n and its offset, then byte i is (n + i) & 0xff', () => {
  const s = streamOf(20, 300, 1000);
  const at = 257 * 24; // frame 257
  assert.equal(s.readUInt32BE(at), 20);
  assert.equal(s.readUInt32BE(at + 4) * 2 ** 32 + s.readUInt32BE(at + 8), 257);
  assert.equal(s.readUInt32BE(at + 12) * 2 ** 32 + s.readUInt32BE(at + 16), 257 * 24);
  assert.deepEqual([...s.subarray(at + 20, at + 24)], [17, 18, 19, 20]);
});

test('a flipped byte, a dropped frame, a repeated frame and a swap are mismatches', () => {
  for (const corrupt of [
    (f: Buffer[]) => {
      f[10][30] ^= 1;
    },
    (f: Buffer[]) => {
      f.splice(20, 1);
    },
    (f: Buffer[]) => {
      f.splice(30, 0, f[30]);
    },
    (f: Buffer[]) => {
      [f[40], f[41]] = [f[41], f[40]];
    },
  ]) {
    const frames = framesOf(100, 100);
    corrupt(frames);
    assert.ok(verify(100, frames).mismatches > 0);
  }
});

test('256 frames missing on a 256-frame boundary are caught (the pattern alone repeats every 256)', () => {
  for (const size of [100, 70_000]) {
    const frames = framesOf(size, 1024);
    const sent = encodeTrailer(1024 * (size + 4), 1024);
    frames.splice(256, 256);
    const v = verify(size, frames, sent);
    assert.equal(v.mismatches, 1, 'the first frame after the gap is out of place');
    assert.match(String(v.finish()), /sent 1024 frames .* 768 arrived/);
  }
});

test('a stream cut at a frame boundary is caught: no trailer, or a trailer that says more', () => {
  const frames = framesOf(100, 50);
  assert.match(String(verify(100, frames.slice(0, 30)).finish()), /without a trailer after 30 frames/);
  assert.equal(verify(100, frames, encodeTrailer(50 * 104, 50)).finish(), undefined);
});

test('the buffers it hands out are never written again', () => {
  for (const size of [1000, 100_000]) {
    const src = new PatternSource(size);
    const first = src.next(50_000);
    const copy = Buffer.from(first);
    for (let i = 0; i < 100; i++) src.next(50_000);
    assert.ok(first.equals(copy));
  }
});

test('a size below the frame index is refused', () => {
  assert.throws(() => new PatternSource(15), /from 16/);
});
