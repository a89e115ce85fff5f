import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import { groAvailable, gsoAvailable, udpOffload } from '../../src/udp/offload.js';

test('offload choice: false is off, auto follows the kernel, true needs it', () => {
  assert.deepEqual(udpOffload(), { segment: true, gro: true }, 'this kernel offers both');
  assert.equal(groAvailable(false), false);
  assert.equal(groAvailable('auto'), true);
  assert.equal(gsoAvailable(true), true);
  assert.throws(() => groAvailable('yes' as never), UsageError);
});

test('SOCKBUF_DISABLE_GRO / SOCKBUF_DISABLE_GSO make the kernel look as if it refused', () => {
  process.env.SOCKBUF_DISABLE_GRO = '1';
  process.env.SOCKBUF_DISABLE_GSO = '1';
  try {
    assert.deepEqual(udpOffload(), { segment: false, gro: false });
    assert.equal(groAvailable('auto'), false);
    assert.throws(
      () => gsoAvailable(true),
      (e: unknown) => e instanceof EnvironmentError && /UDP_SEGMENT/.test(e.message),
    );
  } finally {
    delete process.env.SOCKBUF_DISABLE_GRO;
    delete process.env.SOCKBUF_DISABLE_GSO;
  }
});
