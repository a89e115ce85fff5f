import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUdpBlast } from '../../src/ends/udp-blast.js';
import { EnvironmentError } from '../../src/errors.js';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { accounted, consume, SLOW, sendRaw, until } from './helpers.js';

test('a batch: count, lengths, offsets into data, source addresses (IPv6)', async () => {
  const r = await createUdpReceiver({ listen: '[::1]:0', gro: false, addresses: true });
  try {
    const payloads = [Buffer.from('one'), Buffer.from('datagram two'), Buffer.alloc(100, 0x33)];
    await sendRaw('::1', r.port, payloads);
    const got: Buffer[] = [];
    for await (const b of r) {
      for (let i = 0; i < b.count; i++) {
        got.push(Buffer.from(b.data.subarray(b.offsets[i], b.offsets[i] + b.lengths[i])));
        assert.equal(b.addresses?.[i].host, '::1');
        assert.equal(b.addresses?.[i].family, 6);
      }
      if (got.length === 3) break;
    }
    assert.deepEqual(got, payloads);
  } finally {
    await r.close();
  }
});

test('0-byte and 65507-byte datagrams are delivered whole with 64 KiB slots', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, slot: '64K' });
  try {
    const big = Buffer.alloc(65507, 0x5a);
    await sendRaw('127.0.0.1', r.port, [Buffer.alloc(0), big]);
    const lengths: number[] = [];
    for await (const b of r) {
      for (let i = 0; i < b.count; i++) {
        lengths.push(b.lengths[i]);
        if (b.lengths[i] === big.length)
          assert.ok(b.data.subarray(b.offsets[i], b.offsets[i] + big.length).equals(big));
      }
      if (lengths.length === 2) break;
    }
    assert.deepEqual(lengths, [0, 65507]);
    assert.equal(r.stats().truncated, 0);
  } finally {
    await r.close();
  }
});

test('a datagram larger than a slot is counted as truncated and never delivered', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, slot: 2048 });
  try {
    await sendRaw('127.0.0.1', r.port, [Buffer.alloc(65507), Buffer.alloc(2049), Buffer.alloc(2048, 1)]);
    const lengths: number[] = [];
    for await (const b of r) {
      for (let i = 0; i < b.count; i++) lengths.push(b.lengths[i]);
      if (lengths.length) break;
    }
    assert.deepEqual(lengths, [2048]);
    assert.equal(r.stats().truncated, 2);
  } finally {
    await r.close();
  }
});

test("a batch's views stay valid until the next batch is asked for, and are reused after", async () => {
  const r = await createUdpReceiver({
    listen: '127.0.0.1:0',
    gro: false,
    ring: 1,
    coalesce: 0,
    onFull: 'wait',
  });
  try {
    await sendRaw('127.0.0.1', r.port, [Buffer.from('first')]);
    const it = r[Symbol.asyncIterator]();
    const a = (await it.next()).value;
    const view = a.data.subarray(a.offsets[0], a.offsets[0] + a.lengths[0]);
    await sendRaw('127.0.0.1', r.port, [Buffer.from('SECOND')]);
    await sleep(100); // the reader has the datagram, but the one-entry ring is held by us
    assert.equal(view.toString(), 'first');
    const b = (await it.next()).value;
    assert.equal(b.data.subarray(b.offsets[0], b.offsets[0] + b.lengths[0]).toString(), 'SECOND');
    assert.equal(view.toString(), 'SECON', 'the old view now shows the reused slot');
  } finally {
    await r.close();
  }
});

test('a port already in use is refused with an EnvironmentError (exit 3)', async () => {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
  try {
    await assert.rejects(createUdpReceiver({ listen: `127.0.0.1:${s.address().port}` }), (e: unknown) => {
      assert.ok(e instanceof EnvironmentError);
      assert.equal(e.code, 'EADDRINUSE');
      assert.match(e.message, /EADDRINUSE/);
      return true;
    });
  } finally {
    s.close();
  }
});

test('a steady flow is read in batches, not a recvmmsg call per datagram or two', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, batch: 64, coalesce: '1ms' });
  const c = consume(r);
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '50k' });
  try {
    const res = await s.run({ count: 25_000, duration: '5s' });
    await until(
      () => r.stats().received + r.stats().kernelDrops + r.stats().userspaceDrops >= res.sent,
      10_000,
    );
    const st = r.stats();
    // 64 datagrams per batch, each batch read in a few calls (the reader naps while it fills)
    assert.ok(st.readerCalls * 8 <= st.received, JSON.stringify(st));
  } finally {
    s.close();
    await r.close();
    await c.done;
  }
});

test('after an overflow the next datagrams are delivered once the consumer caught up; resetStats counts from zero', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, ring: 4, batch: 8, onFull: 'drop' });
  const c = consume(r, { each: () => sleep(50) }); // slow: the 4-batch ring overflows
  try {
    await sendRaw(
      '127.0.0.1',
      r.port,
      Array.from({ length: 200 }, () => Buffer.alloc(32)),
    );
    await until(() => r.stats().received + r.stats().userspaceDrops + r.stats().kernelDrops >= 200);
    assert.ok(await until(() => r.stats().queued === 0, 5000), JSON.stringify(r.stats()));
    assert.ok(r.stats().userspaceDrops > 0);
    r.resetStats();
    const z = r.stats();
    assert.deepEqual(
      [z.received, z.bytes, z.batches, z.userspaceDrops, z.kernelDrops, z.readerCalls],
      [0, 0, 0, 0, 0, 0],
    );
    await sendRaw('127.0.0.1', r.port, [Buffer.alloc(7), Buffer.alloc(9)]);
    await until(() => r.stats().received === 2);
    const s = r.stats();
    assert.deepEqual([s.bytes, s.userspaceDrops, s.truncated], [16, 0, 0]);
    assert.ok(s.batches >= 1 && s.readerCalls >= 1);
  } finally {
    await r.close();
    await c.done;
  }
});

test('flood past a slow consumer: alive, bounded memory, sent = received + kernel + userspace + truncated', async () => {
  const r = await createUdpReceiver({
    listen: '127.0.0.1:0',
    gro: false,
    ring: 8,
    batch: 32,
    onFull: 'drop',
  });
  const rss0 = process.memoryUsage().rss;
  const c = consume(r, { each: () => sleep(2) }); // about 16 k datagrams/s: the sender is ~10× faster
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: 'max' });
  try {
    const oversize = 10;
    const [res] = await Promise.all([
      s.run({ duration: SLOW ? '30s' : '1.5s', count: SLOW ? 1e9 : 400_000 }),
      sendRaw(
        '127.0.0.1',
        r.port,
        Array.from({ length: oversize }, () => Buffer.alloc(4000)),
      ),
    ]);
    const total = res.sent + oversize;
    await until(() => accounted(r) === total && r.stats().queued === 0, 10_000);
    await r.close();
    const st = r.stats();
    const seen = (await c.done).tracker.report();
    assert.ok(st.userspaceDrops > 0, 'the slow consumer made the reader drop');
    assert.equal(st.truncated, oversize);
    assert.equal(accounted(r), total, JSON.stringify(st));
    assert.equal(seen.unique, st.received, 'every delivered datagram was distinct');
    assert.equal(seen.duplicates, 0);
    assert.ok(process.memoryUsage().rss - rss0 < 200 * 1024 * 1024, 'memory stays bounded');
  } finally {
    s.close();
    await r.close();
  }
});

test('close() during a flood returns and ends the iteration', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  const c = consume(r);
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: 'max' });
  const ac = new AbortController();
  const sending = s.run({ duration: 5000, signal: ac.signal });
  await until(() => r.stats().received > 1000);
  await r.close();
  const got = await c.done;
  assert.ok(got.batches > 0);
  assert.equal(r.stats().queued, 0, 'nothing is left queued after close');
  ac.abort();
  await sending;
  s.close();
});

test('close() returns while the reader waits on an idle socket', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, sockets: 2 });
  const c = consume(r);
  await r.close();
  assert.equal((await c.done).batches, 0);
});

for (const onFull of ['drop', 'wait'] as const) {
  test(`a consumer that stalls and resumes (onFull: ${onFull}): drops are counted, delivery resumes`, async () => {
    const stallMs = SLOW ? 5000 : 300;
    const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, ring: 4, batch: 64, onFull });
    let stalled = false;
    let after = 0;
    const c = consume(r, {
      each: async (b) => {
        if (!stalled) {
          stalled = true;
          await sleep(stallMs);
        } else after += b.count;
      },
    });
    const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '100k' });
    try {
      const res = await s.run({ duration: stallMs + 400 });
      await until(() => accounted(r) === res.sent && r.stats().queued === 0);
      await r.close();
      await c.done;
      const st = r.stats();
      assert.ok(after > 0, 'delivery resumed after the stall');
      if (onFull === 'drop') assert.ok(st.userspaceDrops > 0, 'the reader dropped while the ring was full');
      else assert.equal(st.userspaceDrops, 0, 'the reader waited instead of dropping');
      assert.equal(accounted(r), res.sent, JSON.stringify(st));
    } finally {
      s.close();
      await r.close();
    }
  });
}

test('SO_REUSEPORT sockets share a port; many flows spread over them', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, sockets: 2 });
  const per = [0, 0];
  const c = consume(r, {
    each: (b) => {
      per[b.socket] += b.count;
    },
  });
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '50k', flows: 16, batch: 4 });
  try {
    const res = await s.run({ count: 4000, duration: '5s' });
    await until(() => per[0] + per[1] >= res.sent);
    assert.equal(per[0] + per[1], res.sent);
    assert.ok(per[0] > 0 && per[1] > 0, `both sockets received: ${per}`);
  } finally {
    s.close();
    await r.close();
    await c.done;
  }
});

test("gro 'auto' that stays off says why in stats() (groOff), and once as a process warning when asked for", async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const quiet = await createUdpReceiver({ listen: '127.0.0.1:0', slot: 2048 }); // gro by default
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    const code = (w: Error) => (w as { code?: string }).code === 'SOCKBUF_GRO_OFF';
    assert.equal(
      warnings.filter(code).length,
      0,
      'the default gro with small slots is no surprise: no warning',
    );
    const a = await createUdpReceiver({ listen: '127.0.0.1:0', slot: 2048, gro: 'auto' });
    const b = await createUdpReceiver({ listen: '127.0.0.1:0', slot: 2048, gro: 'auto' });
    const off = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
    try {
      assert.equal(quiet.gro, false);
      assert.match(quiet.stats().groOff ?? '', /slot 2048 B is below the 64 KiB/);
      assert.equal(a.gro, false);
      assert.match(a.stats().groOff ?? '', /slot 2048 B is below the 64 KiB/);
      assert.equal(off.stats().groOff, undefined, 'gro: false asked for: no reason to give');
      await new Promise((r) => setImmediate(r));
      const ours = warnings.filter(code);
      assert.equal(ours.length, 1, 'warned once for two receivers');
      assert.match(ours[0].message, /gro 'auto' left UDP_GRO off: slot 2048 B/);
    } finally {
      await Promise.all([quiet.close(), a.close(), b.close(), off.close()]);
    }
  } finally {
    process.off('warning', onWarning);
  }
});

test('coalesce: a plain number is milliseconds, a string carries its unit', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, coalesce: 2 });
  await r.close();
  await assert.rejects(
    createUdpReceiver({ listen: '127.0.0.1:0', gro: false, coalesce: '2' }),
    /coalesce: '2'/,
  );
});
