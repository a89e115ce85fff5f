// A UDP far end (what `sockbuf serve` starts, told its client through SOCKBUF_FAR_END): only the
// announced client's datagrams count; another address's are counted as foreign and nowhere else, so
// the accounting stays exact; serve's byte cap cuts the test and the result says why.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { createUdpBlast } from '../../src/ends/udp-blast.js';
import { runUdpSink } from '../../src/ends/udp-sink.js';

/** 200 datagrams of junk from 127.0.0.2 (loopback takes any 127/8 source). */
async function junkFrom(port: number): Promise<void> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.2', () => r()));
  for (let i = 0; i < 200; i++) {
    await new Promise<void>((r) => s.send(Buffer.alloc(64, i), port, '127.0.0.1', () => r()));
    if (i % 20 === 0) await new Promise((r) => setTimeout(r, 2));
  }
  s.close();
}

for (const receiver of ['batch', 'dgram'] as const) {
  test(`a UDP far end (${receiver}) counts only the announced client's datagrams`, async () => {
    let sending: Promise<unknown> = Promise.resolve();
    const r = await runUdpSink(
      {
        listen: '127.0.0.1:0',
        receiver,
        gro: false,
        idle: '1s',
        farEnd: { peer: '127.0.0.1', maxBytes: 1 << 30, maxSeconds: 20 },
      },
      {
        onReady: (info) => {
          sending = Promise.all([
            junkFrom(info.port),
            createUdpBlast({ to: `127.0.0.1:${info.port}`, size: 64, rate: '20k' }).then((s) =>
              s
                .run({ count: 2000, duration: '5s' })
                .then(() => s.sendTrailer(2, 10))
                .finally(() => s.close()),
            ),
          ]);
        },
      },
    );
    await sending;
    assert.equal(r.foreign, 200, JSON.stringify(r));
    assert.equal(r.unsequenced, 0, 'the junk reached no flow');
    assert.equal(r.sent, 2000);
    assert.equal(r.received + r.lost, 2000);
    assert.equal(r.accounting.unaccounted, 0, JSON.stringify(r.accounting));
    assert.equal(r.stopped, undefined);
  });
}

test("a UDP far end cuts the test past serve's max-bytes and says so", async () => {
  const r = await runUdpSink(
    {
      listen: '127.0.0.1:0',
      gro: false,
      idle: '5s',
      farEnd: { peer: '127.0.0.1', maxBytes: 64 * 1000, maxSeconds: 20 },
    },
    {
      onReady: (info) => {
        void createUdpBlast({ to: `127.0.0.1:${info.port}`, size: 1000, rate: '10k' }).then((s) =>
          s.run({ count: 20_000, duration: '3s' }).finally(() => s.close()),
        );
      },
    },
  );
  assert.match(String(r.stopped), /max-bytes: more than 64000 bytes/);
  assert.ok(r.received < 20_000);
});
