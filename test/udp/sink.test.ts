import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createUdpSender } from '../../src/udp/sender.js';
import { runUdpSink } from '../../src/udp/sink.js';

for (const receiver of ['batch', 'dgram'] as const) {
  test(`runUdpSink (${receiver}): ready, intervals, totals from the sequence numbers and the trailer`, async () => {
    let port = 0;
    const intervals: number[] = [];
    const ac = new AbortController();
    let sending: Promise<unknown> = Promise.resolve();
    const result = runUdpSink(
      { listen: '127.0.0.1:0', receiver, gro: false, interval: 0.1, signal: ac.signal },
      {
        onReady: (info) => {
          port = info.port;
          const s = createUdpSender({ to: `127.0.0.1:${port}`, size: 64, rate: '20k', flows: 2 });
          sending = s
            .run({ count: 3000, duration: 5 })
            .then(() => s.sendTrailer(2, 10))
            .then(() => new Promise((r) => setTimeout(r, 100)))
            .finally(() => {
              s.close();
              ac.abort();
            });
        },
        onInterval: (i) => intervals.push(i.received),
      },
    );
    const r = await result;
    await sending;
    assert.ok(port > 0);
    assert.ok(intervals.length > 0, 'interval reports came');
    assert.equal(r.receiver, receiver);
    assert.equal(r.sent, 3000);
    assert.equal(r.flows, 2);
    assert.equal(r.received + r.lost, 3000);
    assert.equal(r.duplicates, 0);
    assert.equal(r.unsequenced, 0);
    assert.equal(r.kernelDropsUnit, 'datagrams');
    if (receiver === 'dgram') assert.equal(r.jsCallsPerDatagram, 1);
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
