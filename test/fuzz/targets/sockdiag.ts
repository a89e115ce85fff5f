// Fuzz target: the sock_diag answer parser (src/observe/sockdiag.ts), from real captured datagrams.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseDiagChunk } from '../../../src/observe/sockdiag.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../../src/sys/constants.js';
import type { Target } from '../harness.js';
import { mutateBytes, type Rng } from '../prng.js';

const fixture = JSON.parse(
  readFileSync(new URL('../../observe/fixtures/sockdiag-capture.json', import.meta.url), 'utf8'),
);
const CORPUS: { protocol: number; chunk: Buffer }[] = fixture.dumps.flatMap(
  (d: { protocol: number; chunks: string[] }) =>
    d.chunks.map((h) => ({ protocol: d.protocol, chunk: Buffer.from(h, 'hex') })),
);

export const sockdiagTargets: Target[] = [
  {
    name: 'sockdiag.parseDiagChunk',
    generate: (rng: Rng) => {
      const base = rng.pick(CORPUS);
      const chunk = rng.chance(0.1)
        ? rng.bytes(rng.length(512))
        : mutateBytes(rng, base.chunk, base.chunk.length);
      return { protocol: rng.pick([base.protocol, IPPROTO_TCP, IPPROTO_UDP]), chunk };
    },
    run: (i: { protocol: number; chunk: Buffer }) => parseDiagChunk(i.chunk, i.protocol),
    allowed: () => false, // documented: never throws
    check: (i, out) => {
      const r = out as ReturnType<typeof parseDiagChunk>;
      // every record is built from 72 real bytes at least
      assert.ok(r.sockets.length * 72 <= i.chunk.length);
      for (const s of r.sockets) assert.ok(s.family === 4 || s.family === 6);
    },
    // views and fixed-size decodes only: nothing proportional to a claimed length
    maxAllocBytes: () => 1024,
  } as Target<{ protocol: number; chunk: Buffer }> as Target,
];
