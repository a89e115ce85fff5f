import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  DATA_MAGIC,
  HEADER_BYTES,
  readHeader,
  splitDatagramStream,
  stampHeaders,
  TRAILER_BYTES,
  TRAILER_MAGIC,
  writeHeader,
} from '../../src/ends/udp-header.js';
import { MAX_FLOWS, SequenceTracker } from '../../src/ends/udp-tracker.js';

const HEADER_MODULE = fileURLToPath(new URL('../../src/ends/udp-header.ts', import.meta.url));
const TRACKER_MODULE = fileURLToPath(new URL('../../src/ends/udp-tracker.ts', import.meta.url));

const feed = (t: SequenceTracker, seqs: number[], flow = 1) => {
  for (const s of seqs) t.record(flow, s, 0, 100);
};

test('in-order arrival: nothing lost', () => {
  const t = new SequenceTracker();
  feed(t, [0, 1, 2, 3, 4]);
  const r = t.report();
  assert.deepEqual([r.unique, r.lost, r.reordered, r.duplicates], [5, 0, 0, 0]);
  assert.equal(r.tailLost, null, 'no trailer: the tail is unknown');
});

test('a gap is loss; a late arrival fills it and counts as reordered; a repeat is a duplicate', () => {
  const t = new SequenceTracker();
  feed(t, [0, 1, 4, 5]);
  assert.equal(t.report().lost, 2);
  feed(t, [2]);
  feed(t, [2, 5]);
  const r = t.report();
  assert.deepEqual([r.unique, r.lost, r.reordered, r.duplicates], [5, 1, 1, 2]);
});

test('the trailer tells the tail that never came', () => {
  const t = new SequenceTracker();
  feed(t, [0, 1, 2, 3, 5, 6]);
  t.recordTrailer(1, 10);
  const r = t.report();
  assert.equal(r.sent, 10);
  assert.equal(r.tailLost, 3);
  assert.equal(r.lost, 4, 'seq 4 and the last three');
});

test('flows are counted apart', () => {
  const t = new SequenceTracker();
  feed(t, [0, 1, 2], 7);
  feed(t, [0, 2], 8);
  t.recordTrailer(7, 3);
  t.recordTrailer(8, 3);
  const r = t.report();
  assert.deepEqual([r.flows, r.unique, r.lost, r.sent, r.tailLost], [2, 5, 1, 6, 0]);
});

test('gaps wider than the window still count right', () => {
  const t = new SequenceTracker();
  feed(t, [0, 200_000, 200_001, 200_000]);
  const r = t.report();
  assert.deepEqual([r.unique, r.lost, r.duplicates], [3, 199_999, 1]);
});

test('jitter follows RFC 3550 (J += (|D| − J) / 16)', () => {
  const t = new SequenceTracker();
  t.record(1, 0, 0, 100);
  t.record(1, 1, 0, 116); // transit changes by 16 µs: J = 1
  assert.equal(t.report().jitterUs, 1);
  t.record(1, 2, 0, 116); // no change: J = 1 − 1/16
  assert.equal(t.report().jitterUs, 15 / 16);
});

test('the header round-trips; short or foreign datagrams carry none', () => {
  const b = Buffer.alloc(64);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  writeHeader(v, 8, { magic: DATA_MAGIC, flow: 0xdeadbeef, seq: 2 ** 40 + 3, sendUs: 1.5e15 });
  assert.deepEqual(readHeader(v, 8, 40), {
    magic: DATA_MAGIC,
    flow: 0xdeadbeef,
    seq: 2 ** 40 + 3,
    sendUs: 1.5e15,
  });
  assert.equal(readHeader(v, 8, HEADER_BYTES - 1), undefined);
  assert.equal(readHeader(v, 0, 64), undefined);
});

test('a trailer carries its copy count; recordDatagram reads data, trailers and foreign datagrams', () => {
  const b = Buffer.alloc(64);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  writeHeader(v, 0, { magic: TRAILER_MAGIC, flow: 7, seq: 5, sendUs: 1, copies: 3 });
  assert.deepEqual(readHeader(v, 0, TRAILER_BYTES), {
    magic: TRAILER_MAGIC,
    flow: 7,
    seq: 5,
    sendUs: 1,
    copies: 3,
  });
  // a trailer cut to the header says no copy count
  assert.equal(readHeader(v, 0, HEADER_BYTES)?.copies, undefined);
  const t = new SequenceTracker();
  writeHeader(v, 32, { magic: DATA_MAGIC, flow: 7, seq: 4, sendUs: 10 });
  assert.equal(t.recordDatagram(v, 32, HEADER_BYTES, 20), 0);
  assert.equal(t.recordDatagram(v, 0, TRAILER_BYTES, 30), 1);
  assert.equal(t.recordDatagram(v, 40, HEADER_BYTES, 40), 0); // no magic there
  const r = t.report();
  assert.equal(t.unsequenced, 1);
  assert.deepEqual(
    [r.unique, r.sent, r.lost, r.tailLost, r.trailers.sent, r.trailers.received],
    [1, 5, 4, 0, 3, 1],
  );
});

test("a datagram stream written back to back (netcat's output) splits into data of the size and trailers", () => {
  const size = 64;
  const b = Buffer.alloc(3 * size + 2 * TRAILER_BYTES + 10);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let at = 0;
  for (let seq = 0; seq < 3; seq++, at += size)
    writeHeader(v, at, { magic: DATA_MAGIC, flow: 0, seq, sendUs: 1 });
  for (let c = 0; c < 2; c++, at += TRAILER_BYTES)
    writeHeader(v, at, { magic: TRAILER_MAGIC, flow: 0, seq: 3, sendUs: 1, copies: 2 });
  assert.deepEqual(splitDatagramStream(b, size), { data: 3, trailers: 2, rest: 10, dataEnd: 3 * size });
  // a tail cut short is not a datagram
  assert.deepEqual(splitDatagramStream(b.subarray(0, 2 * size + 30), size), {
    data: 2,
    trailers: 0,
    rest: 30,
    dataEnd: 2 * size,
  });
});

test('stampHeaders writes the bytes writeHeader writes, on the typed-array path and the DataView path', () => {
  for (const [size, offset] of [
    [64, 0], // typed arrays
    [40, 0], // typed arrays
    [30, 0], // DataView: not a multiple of 8
    [64, 4], // DataView: the buffer is not 8-byte aligned
  ]) {
    const n = 5;
    const fast = Buffer.alloc(n * size + offset).subarray(offset);
    const slow = Buffer.alloc(n * size);
    stampHeaders(fast, n, size, 0xdeadbeef, 2 ** 40 + 3, 1.5e15 + 0.25);
    const v = new DataView(slow.buffer, slow.byteOffset, slow.byteLength);
    for (let j = 0; j < n; j++)
      writeHeader(v, j * size, {
        magic: DATA_MAGIC,
        flow: 0xdeadbeef,
        seq: 2 ** 40 + 3 + j,
        sendUs: 1.5e15 + 0.25,
      });
    assert.deepEqual(fast, slow, `size ${size}, offset ${offset}`);
  }
});

// found by the hostile sweep (issue 23): sequence numbers 2^53 then 2^53 + 2 hung the sink for ever
// (the gap walk's s + 1 === s), so that case runs in a child process with a time limit
test('two datagrams numbered 2^53 and 2^53 + 2 do not hang the tracker', () => {
  const code = `
    import { writeHeader, DATA_MAGIC } from ${JSON.stringify(HEADER_MODULE)};
    import { SequenceTracker } from ${JSON.stringify(TRACKER_MODULE)};
    const t = new SequenceTracker();
    const v = new DataView(new ArrayBuffer(24));
    for (const seq of [2 ** 53, 2 ** 53 + 2]) {
      writeHeader(v, 0, { magic: DATA_MAGIC, flow: 1, seq, sendUs: 1 });
      t.recordDatagram(v, 0, 24, 2);
    }
    console.log(t.unsequenced);
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.signal, null, 'it ended by itself');
  assert.equal(r.stdout.trim(), '2', r.stderr);
});

// numbers no blast sends are counted as unsequenced, once each
test('datagrams whose numbers cannot be counted are unsequenced: no hang, no NaN, nothing lost', () => {
  const t = new SequenceTracker();
  const b = Buffer.alloc(TRAILER_BYTES);
  const v = new DataView(b.buffer);
  const send = (magic: number, seq: number, sendUs = 1, copies?: number) => {
    writeHeader(v, 0, { magic, flow: 7, seq, sendUs, copies });
    return t.recordDatagram(v, 0, magic === TRAILER_MAGIC ? TRAILER_BYTES : HEADER_BYTES, 100);
  };
  for (const seq of [2 ** 53 + 2, Number.NaN, Number.POSITIVE_INFINITY, -1, 1.5, 1e300])
    send(DATA_MAGIC, seq);
  send(DATA_MAGIC, 0, Number.NaN);
  send(TRAILER_MAGIC, 1e300);
  send(TRAILER_MAGIC, 5, 1, 2 ** 31);
  assert.equal(t.unsequenced, 9);
  send(DATA_MAGIC, 0);
  assert.equal(send(TRAILER_MAGIC, 1, 1, 3), 1);
  const r = t.report();
  assert.deepEqual([r.unique, r.lost, r.sent, r.flows, r.jitterUs], [1, 0, 1, 1, 0]);
});

test('a sender naming ever new flows grows the tracker to MAX_FLOWS, no further; the rest is unsequenced', () => {
  const t = new SequenceTracker();
  const b = Buffer.alloc(HEADER_BYTES);
  const v = new DataView(b.buffer);
  for (let flow = 0; flow < MAX_FLOWS + 500; flow++) {
    writeHeader(v, 0, { magic: DATA_MAGIC, flow, seq: 0, sendUs: 1 });
    t.recordDatagram(v, 0, HEADER_BYTES, 2);
  }
  assert.equal(t.report().flows, MAX_FLOWS);
  assert.equal(t.unsequenced, 500);
});

test("recordDatagram's in-order fast path counts as record() does: gaps, late, repeats, two flows, trailers", () => {
  // a stream of headers as a sink meets it: runs in order (the fast path), and everything that leaves
  // it (another flow, a gap, a late one, a repeat, a trailer, a send time that is not a number)
  const size = 32;
  const steps: [number, number, number][] = []; // flow, seq, sendUs (seq −1: a trailer)
  let rnd = 12345;
  const rand = () => {
    rnd = (rnd * 1103515245 + 12345) % 2 ** 31;
    return rnd / 2 ** 31;
  };
  const next = [0, 0];
  for (let i = 0; i < 5000; i++) {
    const f = rand() < 0.1 ? 1 : 0;
    const r = rand();
    if (r < 0.02) next[f] += 3; // a gap
    const seq = r < 0.04 ? Math.max(0, next[f] - 2) : r < 0.05 ? Math.max(0, next[f] - 1) : next[f]++;
    steps.push([f + 7, seq, r > 0.995 ? Number.NaN : 1000 + i]);
  }
  steps.push([7, -1, 0], [8, -1, 0]);
  const buf = Buffer.alloc(steps.length * size);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  steps.forEach(([flow, seq, sendUs], i) => {
    if (seq < 0)
      writeHeader(v, i * size, { magic: TRAILER_MAGIC, flow, seq: next[flow - 7], sendUs, copies: 1 });
    else writeHeader(v, i * size, { magic: DATA_MAGIC, flow, seq, sendUs });
  });
  const fast = new SequenceTracker();
  steps.forEach((_, i) => {
    fast.recordDatagram(v, i * size, size, 5000 + i + (i % 7));
  });
  const slow = new SequenceTracker();
  let bad = 0;
  steps.forEach(([flow, seq, sendUs], i) => {
    if (seq < 0) slow.recordTrailer(flow, next[flow - 7], 1);
    else if (Number.isFinite(sendUs)) slow.record(flow, seq, sendUs, 5000 + i + (i % 7));
    else bad++;
  });
  assert.ok(bad > 0, 'the stream has headers that are not counted');
  assert.ok(slow.report().jitterUs > 0);
  assert.deepEqual(fast.report(), slow.report());
  assert.equal(fast.unsequenced, bad);
  assert.equal(fast.lastDataUs, slow.lastDataUs);
});
