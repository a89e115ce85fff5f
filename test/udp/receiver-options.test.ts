// The receiver's defaults and checks (resolveReceiverOptions), and the GRO receive buffer on a real socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { GRO_RCVBUF, resolveReceiverOptions } from '../../src/udp/receiver-options.js';

const MiB = 1024 * 1024;

test('rcvbuf defaults to 8 MiB without GRO and to 256 MiB with it; an rcvbuf given wins', () => {
  assert.equal(GRO_RCVBUF, 256 * MiB);
  assert.equal(resolveReceiverOptions({ listen: '127.0.0.1:0', gro: false }).options.rcvbuf, 8 * MiB);
  const on = resolveReceiverOptions({ listen: '127.0.0.1:0', gro: true });
  assert.equal(on.gro, true);
  assert.equal(on.options.rcvbuf, 256 * MiB);
  assert.equal(
    resolveReceiverOptions({ listen: '127.0.0.1:0', gro: true, rcvbuf: '8MiB' }).options.rcvbuf,
    8 * MiB,
  );
  assert.equal(resolveReceiverOptions({ listen: '127.0.0.1:0', slot: 2048 }).options.rcvbuf, 8 * MiB);
  assert.throws(() => resolveReceiverOptions({ listen: '127.0.0.1:0', rcvbuf: 'lots' }), /rcvbuf/);
});

test('a GRO receiver gets its 256 MiB receive buffer from the kernel (root forces it)', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: true });
  try {
    const s = r.stats();
    assert.equal(s.rcvbufReport.wanted, GRO_RCVBUF);
    if (process.getuid?.() === 0) assert.ok(s.rcvbuf >= GRO_RCVBUF, `rcvbuf ${s.rcvbuf}`);
  } finally {
    await r.close();
  }
});
