// Fuzz target: the sock_diag dump parser (src/observe/sockdiag.ts), from captured kernel answers
// (test/observe/fixtures/sockdiag-capture.json) mutated, cut, spliced, and from random bytes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseDiagChunk } from '../../../src/observe/sockdiag.js';
import type { Target } from '../harness.js';
import { mutateBytes, type Rng } from '../prng.js';

const capture = JSON.parse(
  readFileSync(new URL('../../observe/fixtures/sockdiag-capture.json', import.meta.url), 'utf8'),
) as { dumps: { protocol: number; chunks: string[] }[] };
const CHUNKS = capture.dumps.flatMap((d) =>
  d.chunks.map((h) => ({ protocol: d.protocol, bytes: Buffer.from(h, 'hex') })),
);

interface Input {
  protocol: number;
  bytes: Buffer;
}

export const sockdiagTargets: Target[] = [
  {
    name: 'sockdiag.parseDiagChunk',
    generate: (rng: Rng): Input => {
      const c = rng.pick(CHUNKS);
      if (rng.chance(0.1)) return { protocol: rng.pick([6, 17]), bytes: rng.bytes(rng.length(2048)) };
      // an unaligned view, as a recv into a shared buffer would give
      const body = mutateBytes(rng, c.bytes, c.bytes.length);
      const off = rng.int(4);
      const backing = Buffer.alloc(body.length + off);
      body.copy(backing, off);
      return { protocol: c.protocol, bytes: backing.subarray(off) };
    },
    run: (i: Input) => parseDiagChunk(i.bytes, i.protocol),
    allowed: () => false, // documented: never throws on malformed input, lists problems instead
    check: (i, out) => {
      const r = out as ReturnType<typeof parseDiagChunk>;
      assert.ok(r.sockets.length <= Math.ceil(i.bytes.length / 16) + 1, 'no more sockets than messages');
      for (const s of r.sockets) {
        assert.ok(s.family === 4 || s.family === 6);
        assert.ok(s.localPort >= 0 && s.localPort < 65536);
      }
    },
    maxAllocBytes: (i) => i.bytes.length + 65536,
  } as Target<Input> as Target,
];
