// Fuzz target: the struct tcp_info decoder (src/sys/tcpinfo.ts) on short and garbage buffers.
import assert from 'node:assert/strict';
import { decodeTcpInfo, TCP_INFO_BUFFER, TCP_INFO_MIN } from '../../../src/sys/tcpinfo.js';
import type { Target } from '../harness.js';
import { mutateBytes, type Rng } from '../prng.js';

/** A plausible reply: established, window scaling on, a few counters set. */
function plausible(rng: Rng): Buffer {
  const b = Buffer.alloc(rng.pick([TCP_INFO_MIN, 232, 248, 280]));
  b[0] = 1;
  b[5] = 0x07;
  b[6] = 0x77;
  b.writeUInt32LE(rng.int(1 << 20), 68);
  b.writeUInt32LE(rng.int(1000), 80);
  return b;
}

export const tcpinfoTargets: Target[] = [
  {
    name: 'tcpinfo.decodeTcpInfo',
    generate: (rng: Rng) => {
      switch (rng.int(3)) {
        case 0:
          return rng.bytes(rng.length(TCP_INFO_BUFFER + 64));
        case 1:
          return rng.bytes(rng.range(TCP_INFO_MIN - 8, TCP_INFO_MIN + 8));
        default:
          return mutateBytes(rng, plausible(rng));
      }
    },
    run: (b: Buffer) => decodeTcpInfo(b),
    allowed: (e) => e instanceof RangeError && /too short/.test(e.message),
    check: (b, out) => {
      const info = out as Record<string, unknown>;
      assert.equal(info.length, b.length);
      assert.equal(typeof info.stateName, 'string');
      for (const [k, v] of Object.entries(info)) {
        if (typeof v === 'number') assert.ok(Number.isFinite(v) && v >= 0, `${k} = ${v}`);
      }
    },
    maxAllocBytes: () => 8192,
  } as Target<Buffer> as Target,
];
