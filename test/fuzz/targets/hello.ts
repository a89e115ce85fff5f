// Fuzz target: the first frame of a blast connection, as the sink parses it (src/ends/hello.ts).
import assert from 'node:assert/strict';
import { parseHello } from '../../../src/ends/hello.js';
import type { Target } from '../harness.js';
import { mutateString, type Rng } from '../prng.js';

const VALID = '{"sockbuf":1,"test":"t","stream":0,"streams":1,"reverse":false,"size":131072}';

export const helloTargets: Target[] = [
  {
    name: 'hello.parseHello',
    generate: (rng: Rng) =>
      Buffer.from(
        rng.chance(0.1)
          ? rng.bytes(rng.length(200)).toString('latin1')
          : mutateString(rng, VALID, ['{', '}', '"', ':', ',', '-1', '1e999', 'true', 'null', '[]']),
        'utf8',
      ),
    run: (b: Buffer) => parseHello(b),
    allowed: (e) => e instanceof Error && /not a sockbuf hello/.test(e.message),
    check: (_b, out) => {
      const h = out as { sockbuf: number; size: number; streams: number };
      assert.equal(h.sockbuf, 1);
      assert.ok(Number.isSafeInteger(h.size) && h.size >= 0 && h.size <= 0xffffffff);
      assert.ok(Number.isSafeInteger(h.streams) && h.streams >= 0);
    },
  } as Target<Buffer> as Target,
];
