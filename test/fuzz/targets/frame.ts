// Fuzz target: the length-prefixed frame decoder (src/tcp/frame.ts), fed a stream cut at random
// read boundaries: valid frames, headers claiming up to 4 GiB, garbage. Memory must follow the bytes
// that arrived, never the length a peer claims.
import assert from 'node:assert/strict';
import { encodeFrame, FrameDecoder, FrameError, frameHeader } from '../../../src/tcp/frame.js';
import type { Target } from '../harness.js';
import type { Rng } from '../prng.js';

const MAX_FRAME = 1 << 20;

interface Input {
  chunks: Buffer[];
  total: number;
}

function stream(rng: Rng): Buffer {
  const parts: Buffer[] = [];
  for (let i = rng.range(0, 6); i > 0; i--) {
    switch (rng.int(4)) {
      case 0:
        parts.push(encodeFrame(rng.bytes(rng.length(3000))));
        break;
      case 1: // a claim, then fewer bytes than claimed
        parts.push(
          frameHeader(rng.pick([MAX_FRAME, MAX_FRAME - 1, MAX_FRAME >> 1, 70_000])),
          rng.bytes(rng.length(2000)),
        );
        break;
      case 2: // a claim beyond the maximum
        parts.push(frameHeader(rng.pick([MAX_FRAME + 1, 0xffffffff, 0x80000000])), rng.bytes(rng.length(16)));
        break;
      default:
        parts.push(rng.bytes(rng.length(64)));
    }
  }
  return Buffer.concat(parts);
}

export const frameTargets: Target[] = [
  {
    name: 'frame.FrameDecoder',
    generate: (rng: Rng): Input => {
      const s = stream(rng);
      const chunks: Buffer[] = [];
      for (let off = 0; off < s.length; ) {
        const n = Math.min(s.length - off, rng.pick([1, 2, 3, 4, 5, rng.length(100), rng.length(5000)]) || 1);
        chunks.push(s.subarray(off, off + n));
        off += n;
      }
      return { chunks, total: s.length };
    },
    run: (i: Input) => {
      let bytes = 0;
      const d = new FrameDecoder((p) => {
        bytes += p.length;
        return true;
      }, MAX_FRAME);
      for (const c of i.chunks) d.push(c);
      return { bytes, frames: d.frames };
    },
    allowed: (e) => e instanceof FrameError,
    check: (i, out) => {
      const r = out as { bytes: number; frames: number };
      assert.ok(r.bytes + 4 * r.frames <= i.total, 'no more payload than was sent');
    },
    maxAllocBytes: (i) => 2 * i.total + 65536,
  } as Target<Input> as Target,
];
