import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { EnvironmentError } from '../../src/errors.js';
import { createDgramReceiver } from '../../src/udp/node-dgram-baseline.js';
import { sendRaw, until } from './helpers.js';

// every warning this file's process emits (Node says a deprecation once per process: collect from the start)
const warnings: Error[] = [];
process.on('warning', (w) => warnings.push(w));

test('the node:dgram baseline: one callback per datagram, the same rcvbuf policy and drop counter', async () => {
  const got: number[] = [];
  const r = await createDgramReceiver({ listen: '[::1]:0', onMessage: (m) => got.push(m.length) });
  try {
    await sendRaw('::1', r.port, [Buffer.alloc(0), Buffer.alloc(65507)]);
    await until(() => got.length === 2);
    assert.deepEqual(got, [0, 65507]);
    const s = r.stats();
    assert.deepEqual([s.received, s.bytes, s.kernelDrops, s.jsCallsPerDatagram], [2, 65507, 0, 1]);
    assert.ok(s.rcvbuf >= 8 * 1024 * 1024, 'the 8 MiB target was applied (root forces it)');
    r.resetStats();
    assert.deepEqual([r.stats().received, r.stats().bytes], [0, 0]);
    await sendRaw('::1', r.port, [Buffer.alloc(10)]);
    await until(() => got.length === 3);
    assert.deepEqual([r.stats().received, r.stats().bytes, r.stats().kernelDrops], [1, 10, 0]);
  } finally {
    await r.close();
  }
});

test('the dgram baseline refuses a port in use with exit 3', async () => {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
  try {
    await assert.rejects(
      createDgramReceiver({ listen: `127.0.0.1:${s.address().port}`, onMessage: () => {} }),
      (e: unknown) => e instanceof EnvironmentError && e.code === 'EADDRINUSE',
    );
  } finally {
    s.close();
  }
});

test('no DEP0112 deprecation warning: the fd comes from src/sys, not from dgram._handle', async () => {
  const r = await createDgramReceiver({ listen: '127.0.0.1:0', onMessage: () => {} });
  try {
    await sendRaw('127.0.0.1', r.port, [Buffer.alloc(8)]);
    await until(() => r.stats().received === 1);
    r.stats(); // reads the fd's kernel drop counter
  } finally {
    await r.close();
  }
  await new Promise((res) => setImmediate(res)); // warnings are emitted on the next tick
  const dep = warnings.filter((w) => (w as { code?: string }).code === 'DEP0112');
  assert.deepEqual(
    dep.map((w) => w.message),
    [],
  );
});
