// Fuzz targets: what a peer sends that sockbuf counts or reads — the UDP test header and trailer
// through the sink's sequence tracker (src/ends/udp-tracker.ts), and iperf3's parameters and results
// documents (src/ends/iperf3/protocol.ts). Properties: every datagram is counted exactly once, no
// figure is NaN, infinite or negative, the tracker stays bounded, and a document is refused in words.
import assert from 'node:assert/strict';
import { readParams, readResults } from '../../../src/ends/iperf3/protocol.js';
import { DATA_MAGIC, HEADER_BYTES, TRAILER_MAGIC, writeHeader } from '../../../src/ends/udp-header.js';
import { MAX_FLOWS, SequenceTracker } from '../../../src/ends/udp-tracker.js';
import type { Target } from '../harness.js';
import { mutateString, type Rng } from '../prng.js';

/** Numbers a hostile sender puts in the f64 fields. */
const F64 = [
  0,
  1,
  2,
  -1,
  0.5,
  1.5,
  2 ** 31,
  2 ** 32,
  2 ** 52,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  1e300,
  -1e300,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -0,
  Number.MIN_VALUE,
];

function datagram(rng: Rng, seq: number): Buffer {
  const kind = rng.int(10);
  if (kind === 0) return rng.bytes(rng.length(64)); // anything at all
  const len = rng.pick([HEADER_BYTES - 1, HEADER_BYTES, 28, 64, 1472]);
  const b = Buffer.alloc(Math.max(len, 28));
  const f64 = () => (rng.chance(0.6) ? rng.pick(F64) : rng.u32() * rng.pick([1, 1e-3, 1e6, 1e12]));
  writeHeader(new DataView(b.buffer, b.byteOffset, b.length), 0, {
    magic: rng.chance(0.8) ? DATA_MAGIC : rng.chance(0.8) ? TRAILER_MAGIC : rng.u32(),
    flow: rng.chance(0.7) ? rng.int(4) : rng.edgeU32(),
    seq: rng.chance(0.5) ? seq : f64(),
    sendUs: rng.chance(0.7) ? Date.now() * 1000 : f64(),
    copies: rng.chance(0.7) ? 3 : rng.edgeU32(),
  });
  return b.subarray(0, len);
}

interface Flood {
  datagrams: Buffer[];
  /** How many distinct flows a burst of fresh flow ids adds on top (0 for most inputs). */
  freshFlows: number;
}

const finiteNonNegative = (v: unknown, what: string) =>
  assert.ok(typeof v === 'number' && Number.isFinite(v) && v >= 0, `${what} = ${v}`);

export const peerTargets: Target[] = [
  {
    name: 'peers.udpSequenceTracker',
    generate: (rng: Rng): Flood => {
      const n = rng.length(300);
      const datagrams = Array.from({ length: n }, (_, i) =>
        datagram(rng, rng.chance(0.8) ? i : rng.int(n + 10)),
      );
      return { datagrams, freshFlows: rng.chance(0.02) ? MAX_FLOWS + 100 : 0 };
    },
    run: ({ datagrams, freshFlows }: Flood) => {
      const t = new SequenceTracker();
      let trailers = 0;
      for (const d of datagrams)
        trailers += t.recordDatagram(
          new DataView(d.buffer, d.byteOffset, d.length),
          0,
          d.length,
          Date.now() * 1000,
        );
      const one = Buffer.alloc(HEADER_BYTES);
      for (let f = 0; f < freshFlows; f++) {
        writeHeader(new DataView(one.buffer), 0, { magic: DATA_MAGIC, flow: 1000 + f, seq: 0, sendUs: 0 });
        t.recordDatagram(new DataView(one.buffer), 0, one.length, 1);
      }
      return { report: t.report(), trailers, unsequenced: t.unsequenced };
    },
    allowed: () => false,
    check: ({ datagrams, freshFlows }, out) => {
      const {
        report: r,
        trailers,
        unsequenced,
      } = out as { report: ReturnType<SequenceTracker['report']>; trailers: number; unsequenced: number };
      // nothing lost: every datagram is data, a trailer or unsequenced, once
      assert.equal(r.unique + r.duplicates + trailers + unsequenced, datagrams.length + freshFlows);
      for (const k of ['unique', 'lost', 'reordered', 'duplicates', 'jitterUs', 'flows'] as const)
        finiteNonNegative(r[k], k);
      if (r.sent !== null) assert.ok(Number.isSafeInteger(r.sent) && r.sent >= 0, `sent ${r.sent}`);
      if (r.tailLost !== null) finiteNonNegative(r.tailLost, 'tailLost');
      assert.ok(Number.isSafeInteger(r.lost), `lost ${r.lost}`);
      assert.ok(r.flows <= MAX_FLOWS, `${r.flows} flows tracked`);
    },
    testCount: 2000,
    // MAX_FLOWS bitmaps of 8 KiB at most, whatever flow ids arrive
    maxAllocBytes: () => MAX_FLOWS * 8192 + (1 << 20),
  } as Target<Flood> as Target,
  {
    name: 'peers.iperf3.readParams',
    generate: (rng: Rng) => {
      const valid =
        '{"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}';
      const text = mutateString(rng, valid, [
        '-1',
        '1e999',
        '-1e308',
        '1e308',
        'true',
        'null',
        '"\\u001b]0;x\\u0007"',
        '[]',
        '{}',
        '0.5',
        '129',
        '16777217',
      ]);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    },
    run: (doc: unknown) => readParams(doc),
    allowed: () => false,
    check: (_d, out) => {
      const p = out as ReturnType<typeof readParams>;
      if (!p.ok) return assert.ok(p.reason.length > 0);
      assert.ok(Number.isFinite(p.seconds) && p.seconds >= 0 && p.seconds <= 86400, `time ${p.seconds}`);
      assert.ok(Number.isInteger(p.parallel) && p.parallel >= 1 && p.parallel <= 128);
      assert.ok(Number.isInteger(p.len) && p.len >= 1 && p.len <= 16 << 20);
      assert.ok(p.omit >= 0 && p.omit <= 600, `omit ${p.omit}`);
      if (p.bytes !== undefined) assert.ok(Number.isSafeInteger(p.bytes) && p.bytes > 0, `bytes ${p.bytes}`);
      if (p.window !== undefined)
        assert.ok(Number.isSafeInteger(p.window) && p.window > 0, `window ${p.window}`);
    },
  } as Target<unknown> as Target,
  {
    name: 'peers.iperf3.readResults',
    generate: (rng: Rng) => {
      const valid =
        '{"cpu_util_total":1.5,"cpu_util_user":1,"cpu_util_system":0.5,"sender_has_retransmits":1,"congestion_used":"cubic","streams":[{"id":1,"bytes":1000,"retransmits":0,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1}]}';
      const text = mutateString(rng, valid, [
        'null',
        '[]',
        '{}',
        '-1',
        '1e308',
        '18446744073709551615',
        '"x"',
        '[null]',
        ',null',
      ]);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    },
    run: (doc: unknown) => readResults(doc),
    allowed: (e) => e instanceof Error && /^the peer's results lack /.test(e.message),
    check: (_d, out) => {
      const r = out as ReturnType<typeof readResults>;
      for (const s of r.streams) assert.ok(Number.isFinite(s.bytes), `bytes ${s.bytes}`);
    },
  } as Target<unknown> as Target,
];
