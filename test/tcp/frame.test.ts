import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  encodeFrame,
  FrameDecoder,
  FrameError,
  frameHeader,
} from '../../src/tcp/frame.js';
import { Rng } from '../fuzz/prng.js';

for (const seed of [1, 2, 3, 42, 1234, 99991, 20261130]) {
  test(`frames survive random read boundaries in a reused read buffer (seed ${seed})`, () => {
    const rng = new Rng(seed);
    const int = (n: number) => rng.int(n);
    const payloads: Buffer[] = [];
    for (let i = 0; i < 300; i++) {
      const kind = int(10);
      const len = kind < 2 ? 0 : kind < 7 ? int(40) : kind < 9 ? int(5000) : int(70_000);
      payloads.push(rng.bytes(len));
    }
    const stream = Buffer.concat(payloads.map((p) => encodeFrame(p)));
    // where each frame starts and ends in the stream, to know which ones span reads
    const spans: [number, number][] = [];
    let pos = 0;
    for (const p of payloads) {
      spans.push([pos, pos + 4 + p.length]);
      pos += 4 + p.length;
    }
    // one scratch buffer reused for every read, as the shared onread buffer is
    const scratch = Buffer.alloc(80_000);
    const got: Buffer[] = [];
    const dec = new FrameDecoder((payload) => {
      got.push(Buffer.from(payload)); // a consumer copies what it keeps
      return true;
    });
    const cuts = new Set<number>();
    let off = 0;
    while (off < stream.length) {
      const mode = int(4);
      const n = Math.min(
        stream.length - off,
        mode === 0 ? 1 + int(3) : mode === 1 ? 1 + int(64) : 1 + int(80_000),
      );
      stream.copy(scratch, 0, off, off + n);
      assert.equal(dec.push(scratch.subarray(0, n)), n);
      scratch.fill(0xee, 0, n); // the next read overwrites it
      off += n;
      cuts.add(off);
    }
    assert.equal(got.length, payloads.length);
    for (let i = 0; i < payloads.length; i++)
      assert.ok(got[i].equals(payloads[i]), `frame ${i} (seed ${seed})`);
    assert.equal(dec.frames, payloads.length);
    assert.equal(dec.partial, false);
    // copied exactly the frames whose payload spans a read boundary
    const sorted = [...cuts].sort((a, b) => a - b);
    const spanning = spans.filter(([s, e]) => sorted.some((c) => c > s + 4 && c < e)).length;
    assert.equal(dec.copied, spanning);
  });
}

test('a frame in one read is handed over as a view, not a copy', () => {
  const chunk = Buffer.concat([encodeFrame(Buffer.from('hello')), encodeFrame(Buffer.from('world'))]);
  const views: Uint8Array[] = [];
  // a handler that returns nothing type-checks (tsc compiles this file) and decoding goes on
  new FrameDecoder((p) => {
    views.push(p);
  }).push(chunk);
  assert.equal(views.length, 2);
  assert.equal(views[0].buffer, chunk.buffer);
  assert.equal(Buffer.from(views[1]).toString(), 'world');
});

test('a read that ends right after a header: the payload in the next read is not copied', () => {
  const f = encodeFrame(Buffer.from('payload'));
  const dec = new FrameDecoder(() => true);
  dec.push(f.subarray(0, 4));
  assert.equal(dec.partial, true);
  dec.push(f.subarray(4));
  assert.equal(dec.frames, 1);
  assert.equal(dec.copied, 0);
});

test('a 4 GiB length prefix is refused before anything is allocated', () => {
  const before = process.memoryUsage().arrayBuffers;
  const dec = new FrameDecoder(() => true);
  assert.throws(
    () => dec.push(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3])),
    (e: unknown) => {
      assert.ok(e instanceof FrameError);
      assert.equal(e.length, 0xffffffff);
      assert.equal(e.maxFrame, DEFAULT_MAX_FRAME_BYTES);
      return true;
    },
  );
  // split header: still refused at the 4th byte
  const dec2 = new FrameDecoder(() => true, 1000);
  dec2.push(Buffer.from([0, 0]));
  assert.throws(() => dec2.push(Buffer.from([0x03, 0xe9])), FrameError); // 1001
  assert.ok(process.memoryUsage().arrayBuffers - before < 1024 * 1024, 'no large allocation');
});

test('a frame of exactly maxFrame is accepted', () => {
  let n = -1;
  const dec = new FrameDecoder((p) => {
    n = p.length;
    return true;
  }, 1000);
  dec.push(encodeFrame(Buffer.alloc(1000)));
  assert.equal(n, 1000);
});

test('a stream cut mid-frame is visible as partial', () => {
  const dec = new FrameDecoder(() => true);
  const f = encodeFrame(Buffer.alloc(100, 1));
  dec.push(f.subarray(0, 2));
  assert.equal(dec.partial, true);
  dec.push(f.subarray(2, 50));
  assert.equal(dec.partial, true);
  dec.push(f.subarray(50));
  assert.equal(dec.partial, false);
});

test('the handler can stop decoding; push returns what it consumed', () => {
  const chunk = Buffer.concat([
    encodeFrame(Buffer.from('a')),
    encodeFrame(Buffer.from('bc')),
    Buffer.from('rest'),
  ]);
  const dec = new FrameDecoder(() => false);
  assert.equal(dec.push(chunk), 5);
  assert.equal(dec.frames, 1);
});

test('frameHeader and encodeFrame agree; lengths past u32 are refused', () => {
  const p = Buffer.from('xyz');
  assert.deepEqual(Buffer.concat([frameHeader(3), p]), encodeFrame(p));
  assert.throws(() => frameHeader(2 ** 32), UsageError);
});
