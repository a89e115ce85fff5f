import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import { warmUp } from '../../src/ends/udp-warm-up.js';

test('warmUp sends to the socket itself (wildcard → loopback) and returns once all it sent was taken', async () => {
  const sock = dgram.createSocket('udp4');
  let taken = 0;
  sock.on('message', () => {
    taken++;
  });
  await new Promise<void>((r) => sock.bind(0, '0.0.0.0', r));
  try {
    await warmUp(
      '0.0.0.0',
      sock.address().port,
      false,
      0.1,
      1 << 20,
      () => taken,
      () => 0,
    );
    assert.ok(taken >= 16, `only ${taken} datagrams arrived`);
    const after = taken;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(taken, after, 'datagrams still arriving after warmUp returned');
  } finally {
    sock.close();
  }
});
