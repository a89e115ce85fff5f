// Iperf3Sink against a scripted iperf3 client on loopback, for what the real iperf3 -c shows only now
// and then (test/cli/iperf3.test.ts runs the real binary).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { Iperf3Sink } from '../../../src/ends/iperf3/iperf3-sink.js';
import {
  encodeJson,
  encodeState,
  makeCookie,
  paramsDocument,
  resultsDocument,
  State,
} from '../../../src/ends/iperf3/protocol.js';

/** Reads exact byte counts off a socket, in order. */
function reader(s: net.Socket) {
  let buf = Buffer.alloc(0);
  let wake = () => {};
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    wake();
  });
  return async (n: number): Promise<Buffer> => {
    while (buf.length < n) await new Promise<void>((r) => (wake = r));
    const out = buf.subarray(0, n);
    buf = buf.subarray(n);
    return out;
  };
}

test('reverse: at TEST_END the sink ends every stream (FIN) before the client answers EXCHANGE_RESULTS', async () => {
  const lines: [string, Record<string, unknown>][] = [];
  const sink = await Iperf3Sink.start(
    { host: '127.0.0.1', port: 0, reader: { kind: 'data' }, once: true, intervalSeconds: 10 },
    (event, fields) => lines.push([event, fields as Record<string, unknown>]),
  );
  const cookie = makeCookie();
  const ctrl = net.connect(sink.server.port, '127.0.0.1');
  const data: net.Socket[] = [];
  try {
    const read = reader(ctrl);
    const state = async () => (await read(1)).readInt8(0);
    ctrl.write(cookie);
    assert.equal(await state(), State.PARAM_EXCHANGE);
    ctrl.write(encodeJson(paramsDocument({ seconds: 1, parallel: 2, len: 131072, reverse: true })));
    assert.equal(await state(), State.CREATE_STREAMS);
    let received = 0;
    const ended: Promise<unknown>[] = [];
    for (let i = 0; i < 2; i++) {
      const d = net.connect(sink.server.port, '127.0.0.1');
      d.write(cookie);
      d.on('data', (b) => {
        received += b.length;
      });
      ended.push(once(d, 'end'));
      data.push(d);
    }
    assert.equal(await state(), State.TEST_START);
    assert.equal(await state(), State.TEST_RUNNING);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(received > 0, 'the sink sends');
    ctrl.write(encodeState(State.TEST_END));
    // iperf3's client reads its streams with blocking whole-block reads until it sees EXCHANGE_RESULTS:
    // only the end of the stream lets a block that straddles it return. Nothing else is sent meanwhile.
    const timeout = new Promise((_, fail) =>
      setTimeout(() => fail(new Error('no FIN on the data streams within 5 s of TEST_END')), 5000).unref(),
    );
    await Promise.race([Promise.all(ended), timeout]);
    assert.equal(await state(), State.EXCHANGE_RESULTS);
    ctrl.write(
      encodeJson(
        resultsDocument({
          cpuUtilTotal: 1,
          cpuUtilUser: 1,
          cpuUtilSystem: 0,
          senderHasRetransmits: -1,
          streams: [1, 3].map((id) => ({ id, bytes: 0, retransmits: -1, startSeconds: 0, endSeconds: 1 })),
        }),
      ),
    );
    const len = (await read(4)).readUInt32BE(0);
    const theirs = JSON.parse((await read(len)).toString()) as { streams: { bytes: number }[] };
    assert.equal(await state(), State.DISPLAY_RESULTS);
    ctrl.end(encodeState(State.IPERF_DONE));
    for (const d of data) d.end();
    const result = await sink.done;
    assert.equal(result.errors, 0);
    // read to the FIN: every byte the sink counts sent arrived, and its results say the same
    const sent = theirs.streams.reduce((a, s) => a + s.bytes, 0);
    assert.equal(received, sent);
    assert.equal(result.sentBytes, sent);
  } finally {
    ctrl.destroy();
    for (const d of data) d.destroy();
    await sink.stop(true);
  }
});
