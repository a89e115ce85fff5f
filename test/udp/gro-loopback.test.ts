// GSO on send, GRO on receive, on real loopback sockets (issue 7).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IPPROTO_UDP, SOCK_DGRAM, SOL_SOCKET, UDP_SEGMENT } from '../../src/sys/constants.js';

/** SO_NO_CHECK (asm-generic/socket.h). */
const SO_NO_CHECK = 11;

import { createUdpBlast } from '../../src/ends/udp-blast.js';
import { runUdpSink } from '../../src/ends/udp-sink.js';
import { EnvironmentError } from '../../src/errors.js';
import { call } from '../../src/sys/libc.js';
import { MsgVec, sendmmsg } from '../../src/sys/mmsg.js';
import { encodeSockaddr } from '../../src/sys/sockaddr.js';
import { closeFd, createSocket, setIntOption } from '../../src/sys/socket.js';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { consume, until } from './helpers.js';

/** One sendmmsg of one message with UDP_SEGMENT `segment`: the kernel cuts `payload` into datagrams. */
function sendSegmented(port: number, payload: Buffer, segment: number): void {
  const fd = createSocket('127.0.0.1', SOCK_DGRAM);
  try {
    const sa = encodeSockaddr({ host: '127.0.0.1', port });
    call('connect', fd, sa, sa.length);
    setIntOption(fd, IPPROTO_UDP, UDP_SEGMENT, segment);
    const vec = new MsgVec({ count: 1 });
    vec.setIov(0, payload, 0, payload.length);
    assert.equal(sendmmsg(fd, vec, 0, 1, 0), 1);
  } finally {
    closeFd(fd);
  }
}

async function receiveLengths(gro: boolean, send: (port: number) => void, expect: number) {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro, slot: '64K', onFull: 'wait' });
  const got: { length: number; first: number }[] = [];
  const c = (async () => {
    for await (const b of r)
      for (let i = 0; i < b.count; i++) got.push({ length: b.lengths[i], first: b.data[b.offsets[i]] });
  })();
  send(r.port);
  await until(() => got.length >= expect);
  await r.close();
  await c;
  return { got, stats: r.stats() };
}

for (const [segment, count, last] of [
  [1200, 3, 500],
  [1472, 40, 1472],
  [64, 64, 10],
  [1, 64, 1],
] as const) {
  test(`GRO on and off give the same datagrams: ${count} × ${segment} B, last ${last} B`, async () => {
    const parts = [...Array.from({ length: count - 1 }, () => segment), last];
    const payload = Buffer.concat(parts.map((n, k) => Buffer.alloc(n, k & 0xff)));
    const on = await receiveLengths(true, (p) => sendSegmented(p, payload, segment), parts.length);
    const off = await receiveLengths(false, (p) => sendSegmented(p, payload, segment), parts.length);
    const expected = parts.map((length, k) => ({ length, first: k & 0xff }));
    assert.deepEqual(on.got, expected);
    assert.deepEqual(off.got, expected);
    assert.ok(on.stats.gro && !off.stats.gro);
    assert.ok(
      on.stats.readerMessages < parts.length || parts.length === 1,
      'GRO handed over fewer messages than datagrams',
    );
    assert.equal(off.stats.readerMessages, parts.length);
  });
}

test('GSO sender into a GRO receiver: every sequence number arrives exactly once', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: true, onFull: 'wait' });
  const c = consume(r);
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '300k', gso: true, batch: 4 });
  try {
    assert.ok(s.usingGso);
    const res = await s.run({ count: 30_000, duration: '10s' });
    assert.equal(res.sent, 30_000);
    assert.equal(res.gso, true);
    await until(() => r.stats().received >= res.sent || r.stats().kernelDrops > 0);
    await r.close();
    const rep = (await c.done).tracker.report();
    const st = r.stats();
    assert.equal(rep.duplicates, 0);
    assert.equal(rep.unique + rep.lost, res.sent);
    if (st.kernelDrops === 0) assert.equal(rep.unique, res.sent, 'no kernel drop: every datagram came once');
    assert.ok(
      st.readerMessages * 8 < st.received,
      `coalesced: ${st.readerMessages} messages for ${st.received}`,
    );
    assert.ok(st.jsCallsPerDatagram < 0.01);
  } finally {
    s.close();
    await r.close();
  }
});

test('with GRO the sink says kernel drops count coalesced messages, and loss comes from sequence numbers', async () => {
  const r = await runUdpSink(
    { listen: '127.0.0.1:0', gro: true, idle: 1000 },
    {
      onReady: (info) => {
        void createUdpBlast({ to: `127.0.0.1:${info.port}`, size: 64, rate: '100k', gso: true }).then((s) =>
          s
            .run({ count: 2000, duration: '5s' })
            .then(() => s.sendTrailer(1, 0))
            .finally(() => s.close()),
        );
      },
    },
  );
  assert.equal(r.gro, true);
  assert.equal(r.kernelDropsUnit, 'gro-messages');
  assert.equal(r.sent, 2000);
  assert.equal(r.received + r.lost, 2000);
});

test('a kernel that refuses UDP_GRO / UDP_SEGMENT (forced off): auto falls back, true is refused', async () => {
  process.env.SOCKBUF_DISABLE_GRO = '1';
  process.env.SOCKBUF_DISABLE_GSO = '1';
  try {
    await assert.rejects(createUdpReceiver({ listen: '127.0.0.1:0', gro: true }), EnvironmentError);
    await assert.rejects(createUdpBlast({ to: '127.0.0.1:9', gso: true }), EnvironmentError);
    const r = await createUdpReceiver({ listen: '127.0.0.1:0' });
    assert.equal(r.gro, false);
    assert.equal(r.layout.slot, 2048, 'without GRO the slots are the plain default');
    const c = consume(r);
    const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '50k', gso: 'auto' });
    const res = await s.run({ count: 1000, duration: '5s' });
    s.close();
    assert.equal(res.gso, false);
    assert.match(String(res.gsoFallback), /refuses UDP_SEGMENT/);
    await until(() => r.stats().received + r.stats().kernelDrops >= 1000);
    await r.close();
    const rep = (await c.done).tracker.report();
    assert.equal(rep.unique + rep.lost, 1000);
  } finally {
    delete process.env.SOCKBUF_DISABLE_GRO;
    delete process.env.SOCKBUF_DISABLE_GSO;
  }
});

test('GSO refused at send time (EINVAL: no UDP checksum, as on a NIC without offload) falls back once', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, onFull: 'wait' });
  const c = consume(r);
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '10k', gso: true });
  // SO_NO_CHECK: the kernel refuses UDP_SEGMENT sends on a socket that sends no checksum
  for (const fd of s.fds) setIntOption(fd, SOL_SOCKET, SO_NO_CHECK, 1);
  const warnings: string[] = [];
  s.onWarning = (m) => warnings.push(m);
  try {
    const res = await s.run({ count: 500, duration: '5s' });
    assert.equal(res.sent, 500);
    assert.equal(res.gso, false);
    assert.equal(res.gsoFallback, 'EINVAL');
    assert.equal(warnings.length, 1, 'the fallback is reported once');
    await until(() => r.stats().received >= 500);
    await r.close();
    const rep = (await c.done).tracker.report();
    assert.equal(rep.unique, 500, 'every datagram came once, after the fallback');
  } finally {
    s.close();
    await r.close();
  }
});
