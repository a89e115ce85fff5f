// iperf3's control protocol, the pure part: cookie, stream ids, framing, what a 3.12 peer sends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  COOKIE_BYTES,
  encodeJson,
  encodeServerError,
  encodeState,
  makeCookie,
  paramsDocument,
  readParams,
  readResults,
  resultsDocument,
  State,
  streamId,
} from '../../../src/ends/iperf3/protocol.js';
import { limitedShare, pinnedCeilings } from '../../../src/ends/iperf3/summary.js';

test('a cookie is 36 characters of [a-z2-7] and a NUL; two are different', () => {
  const a = makeCookie();
  assert.equal(a.length, COOKIE_BYTES);
  assert.match(a.subarray(0, 36).toString('latin1'), /^[a-z2-7]{36}$/);
  assert.equal(a[36], 0);
  assert.notDeepEqual(a, makeCookie());
});

test('stream ids are 1, 3, 4, 5 … as iperf_add_stream numbers them', () => {
  assert.deepEqual([0, 1, 2, 3].map(streamId), [1, 3, 4, 5]);
});

test('states are signed bytes; JSON is a 4-byte big-endian length and the text; SERVER_ERROR carries two ints', () => {
  assert.deepEqual([...encodeState(State.ACCESS_DENIED)], [0xff]);
  assert.deepEqual([...encodeState(State.PARAM_EXCHANGE)], [9]);
  const j = encodeJson({ a: 1 });
  assert.equal(j.readUInt32BE(0), 7);
  assert.equal(j.subarray(4).toString(), '{"a":1}');
  const e = encodeServerError(13, 0);
  assert.deepEqual([e.readInt8(0), e.readInt32BE(1), e.readInt32BE(5)], [-2, 13, 0]);
});

test('parameters: time is a whole number of seconds; window only when asked; reverse only when set', () => {
  const p = paramsDocument({ seconds: 1.5, parallel: 2, len: 131072, reverse: false });
  assert.equal(p.time, 2);
  assert.equal(p.tcp, true);
  assert.equal('window' in p, false);
  assert.equal('reverse' in p, false);
  const r = paramsDocument({ seconds: 3, parallel: 1, len: 1000, reverse: true, window: 131072 });
  assert.deepEqual([r.time, r.reverse, r.window], [3, true, 131072]);
});

test('a 3.12 client parameters read back; UDP, SCTP and --bidir are refused with a reason', () => {
  // what iperf3 3.12 -c -t 1 -P 2 -R -w 128K sends (from --debug)
  const sent = {
    tcp: true,
    omit: 0,
    time: 1,
    num: 0,
    blockcount: 0,
    parallel: 2,
    reverse: true,
    window: 131072,
    len: 131072,
    pacing_timer: 1000,
    client_version: '3.12',
  };
  const p = readParams(sent);
  assert.ok(p.ok);
  assert.deepEqual(
    [p.seconds, p.parallel, p.reverse, p.window, p.len, p.bytes, p.clientVersion],
    [1, 2, true, 131072, 131072, undefined, '3.12'],
  );
  const n = readParams({ ...sent, num: 5_000_000 });
  assert.ok(n.ok && n.bytes === 5_000_000);
  const k = readParams({ ...sent, blockcount: 3 });
  assert.ok(k.ok && k.bytes === 3 * 131072);
  for (const [extra, word] of [
    [{ udp: true, tcp: undefined }, /UDP/],
    [{ sctp: true, tcp: undefined }, /SCTP/],
    [{ bidirectional: true }, /--bidir/],
    [{ parallel: 0 }, /parallel/],
  ] as const) {
    const r = readParams({ ...sent, ...extra });
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.reason, word);
  }
  assert.equal(readParams([1]).ok, false);
});

test("results round-trip; iperf3's unsigned -1 reads as -1; a missing field is named", () => {
  const doc = resultsDocument({
    cpuUtilTotal: 1,
    cpuUtilUser: 0.5,
    cpuUtilSystem: 0.5,
    senderHasRetransmits: -1,
    streams: [{ id: 1, bytes: 10, retransmits: -1, startSeconds: 0, endSeconds: 1 }],
  });
  for (const k of ['cpu_util_total', 'cpu_util_user', 'cpu_util_system', 'sender_has_retransmits'])
    assert.ok(k in doc, k);
  const s = (doc.streams as Record<string, unknown>[])[0];
  for (const k of ['id', 'bytes', 'retransmits', 'jitter', 'errors', 'packets', 'start_time', 'end_time'])
    assert.ok(k in s, k);
  // as iperf3 3.12's server writes a receiver's results (cJSON prints -1 as unsigned 64-bit)
  const text =
    '{"cpu_util_total":8.5,"cpu_util_user":0.2,"cpu_util_system":8.2,"sender_has_retransmits":18446744073709551615,' +
    '"congestion_used":"bbr","streams":[{"id":1,"bytes":187564032,"retransmits":18446744073709551615,"jitter":0,' +
    '"errors":0,"packets":0,"start_time":0,"end_time":1.065667}]}';
  const r = readResults(JSON.parse(text));
  assert.equal(r.senderHasRetransmits, -1);
  assert.equal(r.congestion, 'bbr');
  assert.deepEqual(r.streams[0], {
    id: 1,
    bytes: 187564032,
    retransmits: -1,
    startSeconds: 0,
    endSeconds: 1.065667,
  });
  assert.throws(() => readResults({ ...JSON.parse(text), cpu_util_user: undefined }), /cpu_util_user/);
  assert.throws(() => readResults({ ...JSON.parse(text), streams: [{ id: 1 }] }), /streams\[\]\.bytes/);
});

test('limited shares: weighted by busy time over a test, the mean of the streams in an interval', () => {
  assert.deepEqual(
    limitedShare([
      { busyUs: 1000, rwndLimitedUs: 500, sndbufLimitedUs: 0 },
      { busyUs: 3000, rwndLimitedUs: 0, sndbufLimitedUs: 1000 },
    ]),
    { rwndLimitedPct: 12.5, sndbufLimitedPct: 25 },
  );
  assert.deepEqual(limitedShare([{ rwndLimitedPct: 10 }, { rwndLimitedPct: 30, sndbufLimitedPct: 4 }]), {
    rwndLimitedPct: 20,
    sndbufLimitedPct: 4,
  });
  assert.deepEqual(limitedShare([{}, {}]), {});
});

test('a pinned buffer gives a ceiling of about the size asked per RTT; autotuned ones none', () => {
  const pinned = {
    requested: 131072,
    effective: 262144,
    limit: 4194304,
    clamped: false,
    autotuning: false,
  } as const;
  const auto = { requested: 'auto', autotuning: true } as const;
  // 128 KiB at 2 ms: 131072 × 8 / 0.002 = 524.288 Mbit/s
  assert.deepEqual(pinnedCeilings({ sndbuf: pinned, rcvbuf: auto }, 2000), {
    sndbufCeilingBitsPerSecond: 524288000,
  });
  assert.deepEqual(pinnedCeilings({ sndbuf: auto, rcvbuf: pinned }, 2000), {
    rcvbufCeilingBitsPerSecond: 524288000,
  });
  assert.deepEqual(pinnedCeilings({ sndbuf: auto, rcvbuf: auto }, 2000), {});
  assert.deepEqual(pinnedCeilings({ sndbuf: pinned, rcvbuf: pinned }, undefined), {});
});

// found by the hostile sweep (issue 23): a client could ask for 10^150 s, omit 10^78 s or 10^119 bytes
test("parameters past iperf3's own bounds are refused with a reason; a results number that is not finite is missing", () => {
  const base = { tcp: true, parallel: 1, len: 131072 };
  for (const [extra, why] of [
    [{ time: 86401 }, /^time 86401 s/],
    [{ time: -1 }, /^time -1 s/],
    [{ omit: 601 }, /^omit 601 s/],
    [{ num: 1e119 }, /bytes$/],
    [{ blockcount: 2 ** 60 }, /bytes$/],
  ] as const) {
    const p = readParams({ ...base, ...extra });
    assert.ok(!p.ok && why.test(p.reason), JSON.stringify(p));
  }
  assert.ok(readParams({ ...base, time: 86400, omit: 600 }).ok);
  const results = { cpu_util_total: 1, cpu_util_user: 1, cpu_util_system: 0, sender_has_retransmits: 1 };
  assert.throws(
    () => readResults({ ...results, streams: [null] }),
    /the peer's results lack streams\[\]\.id/,
  );
  assert.throws(
    () => readResults({ ...results, streams: [{ id: 1, bytes: Number.POSITIVE_INFINITY, retransmits: 0 }] }),
    /lack streams\[\]\.bytes/,
  );
});
