import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runUdpSink } from '../../src/ends/udp-sink.js';
import { createUdpSender } from '../../src/udp/sender.js';

for (const receiver of ['batch', 'dgram'] as const) {
  test(`runUdpSink (${receiver}): ready, intervals, totals from the sequence numbers and the trailer`, async () => {
    let port = 0;
    const intervals: number[] = [];
    let sending: Promise<unknown> = Promise.resolve();
    // Stops by itself once nothing came for a while (a loaded machine can hold datagrams in flight
    // for a good fraction of a second, so no fixed wait after the trailer).
    const result = runUdpSink(
      { listen: '127.0.0.1:0', receiver, gro: false, interval: 0.1, idle: 1.5 },
      {
        onReady: (info) => {
          port = info.port;
          const s = createUdpSender({ to: `127.0.0.1:${port}`, size: 64, rate: '20k', flows: 2 });
          sending = s
            .run({ count: 3000, duration: 5 })
            .then(() => s.sendTrailer(2, 10))
            .finally(() => s.close());
        },
        onInterval: (i) => intervals.push(i.received),
      },
    );
    const r = await result;
    await sending;
    assert.ok(port > 0);
    assert.ok(intervals.length > 0, 'interval reports came');
    assert.equal(r.receiver, receiver);
    assert.equal(r.sent, 3000, JSON.stringify(r));
    assert.equal(r.flows, 2);
    assert.equal(r.received + r.lost, 3000);
    assert.equal(r.duplicates, 0);
    assert.equal(r.unsequenced, 0);
    assert.equal(r.kernelDropsUnit, 'datagrams');
    if (receiver === 'dgram') assert.equal(r.jsCallsPerDatagram, 1);
    // one recvmsg per datagram for node:dgram (trailers included); recvmmsg takes several at once
    if (receiver === 'dgram') assert.ok(r.recvCalls >= r.received, JSON.stringify(r));
    else assert.ok(r.recvCalls > 0 && r.recvCalls < r.received, JSON.stringify(r));
  });
}

test('runUdpSink stops by itself after --idle once datagrams came', async () => {
  const r = await runUdpSink(
    { listen: '127.0.0.1:0', gro: false, idle: 0.2 },
    {
      onReady: (info) => {
        const s = createUdpSender({ to: `127.0.0.1:${info.port}`, size: 64, rate: '10k' });
        s.run({ count: 100, duration: 5 }).finally(() => s.close());
      },
    },
  );
  assert.equal(r.received + r.lost, 100);
});

test('runUdpSink stops on abort and still reports', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const r = await runUdpSink({ listen: '127.0.0.1:0', gro: false, signal: ac.signal });
  assert.equal(r.received, 0);
  assert.equal(r.sent, null);
});
