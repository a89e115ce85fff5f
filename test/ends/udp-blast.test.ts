import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { createUdpBlast, parseSendRate } from '../../src/ends/udp-blast.js';
import { paceKept } from '../../src/ends/udp-blast-options.js';
import { ResolveError, UsageError } from '../../src/errors.js';
import { SOCK_DGRAM } from '../../src/sys/constants.js';
import { bindFd, closeFd, createSocket, localEndpoint } from '../../src/sys/socket.js';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { consume, until } from '../udp/helpers.js';

test('--rate: max, datagrams per second, or a payload bit rate', () => {
  assert.equal(parseSendRate('max', 64), Number.POSITIVE_INFINITY);
  assert.equal(parseSendRate('100k', 64), 100_000);
  assert.equal(parseSendRate('100kpps', 64), 100_000);
  assert.equal(parseSendRate('512kbit', 64), 1000);
  assert.throws(
    () => parseSendRate('fast', 64),
    (e: unknown) => e instanceof UsageError && /rate.*'fast'/.test(e.message),
  );
});

test('bad sizes and counts are usage errors naming the option', async () => {
  await assert.rejects(createUdpBlast({ to: '127.0.0.1:9', size: 70000 }), /size: '70000'/);
  await assert.rejects(createUdpBlast({ to: '127.0.0.1:9', flows: 0 }), /flows: '0'/);
  // the ranges are checked here, once: blast udp only parses whole numbers
  for (const [o, option] of [
    [{ flows: 1025 }, 'flows'],
    [{ batch: 0 }, 'batch'],
    [{ batch: 1025 }, 'batch'],
  ] as const)
    await assert.rejects(
      createUdpBlast({ to: '127.0.0.1:9', ...o }),
      (err: unknown) =>
        err instanceof UsageError &&
        err.option === option &&
        /\(expected a whole number from 1 to 1024\)/.test(err.message),
    );
  await assert.rejects(createUdpBlast({ to: 'no where:9' }), /to: 'no where:9'/);
});

test('a host name: createUdpBlast resolves once the sockets are made; an unknown one rejects it with a ResolveError', async () => {
  const r = await createUdpReceiver({ listen: 'localhost:0', gro: false, onFull: 'wait' });
  assert.ok(net.isIP(r.host), `bound to an address: ${r.host}`);
  const s = await createUdpBlast({ to: `localhost:${r.port}`, size: 64, rate: '10k' });
  try {
    assert.equal(s.fds.length, 1);
    const sent = (await s.run({ count: 100 })).sent;
    assert.equal(sent, 100);
  } finally {
    s.close();
    await r.close();
  }
  await assert.rejects(
    createUdpBlast({ to: 'no-such-host.invalid:9' }),
    (e: unknown) => e instanceof ResolveError && e.option === 'to',
  );
});

test('a counted send: every datagram numbered once per flow, the trailer tells the total', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, onFull: 'wait' });
  const c = consume(r);
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 100, rate: '200k', flows: 3, batch: 7 });
  try {
    const res = await s.run({ count: 5000, duration: '10s' });
    assert.equal(res.sent, 5000);
    assert.equal(res.bytes, 500_000);
    assert.equal(res.sendErrors, 0);
    await s.sendTrailer(1, 0);
    await until(() => r.stats().received >= 5003);
    await r.close();
    const rep = (await c.done).tracker.report();
    const st = r.stats();
    assert.equal(rep.flows, 3);
    assert.equal(rep.unique + rep.lost, 5000);
    assert.equal(rep.lost, st.kernelDrops, 'any loss is the kernel drops, exactly');
    assert.equal(rep.duplicates, 0);
  } finally {
    s.close();
    await r.close();
  }
});

test('sending to a port nobody listens on counts the refusals as send errors', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  const port = r.port;
  await r.close();
  const s = await createUdpBlast({ to: `127.0.0.1:${port}`, size: 64, rate: '10k', batch: 1 });
  try {
    const res = await s.run({ count: 50, duration: 500 });
    assert.ok(res.sendErrors > 0, 'ICMP port unreachable makes the connected socket refuse');
    assert.ok(res.sendErrorsByCode.ECONNREFUSED > 0);
  } finally {
    s.close();
  }
});

test('a paced GSO send goes out in whole super-datagrams, not a few datagrams per send', async () => {
  // a socket nobody reads (the kernel drops what does not fit): the sender has the event loop alone
  const fd = createSocket('127.0.0.1', SOCK_DGRAM);
  bindFd(fd, { host: '127.0.0.1', port: 0 });
  const port = localEndpoint(fd)?.port;
  const s = await createUdpBlast({ to: `127.0.0.1:${port}`, size: 64, rate: '200k', gso: true });
  try {
    assert.equal(s.usingGso, true);
    const res = await s.run({ count: 64_000, duration: '10s' });
    assert.equal(res.sent, 64_000);
    // 64 datagrams per send when whole; pacing alone sent what was due every few microseconds
    assert.ok(res.sendCalls * 32 <= res.sent, JSON.stringify(res));
  } finally {
    s.close();
    closeFd(fd);
  }
});

test('paceKept: short by at most 2 % and one GSO message', () => {
  assert.equal(paceKept(100_000, 98_000, 1, 64), true);
  assert.equal(paceKept(100_000, 97_937, 1, 64), true, 'one GSO message short of 98 %');
  assert.equal(paceKept(100_000, 97_935, 1, 64), false);
  assert.equal(paceKept(1e9, 1e6, 0.3, 64), false);
  assert.equal(paceKept(2000, 599, 0.3, 1), true);
});
