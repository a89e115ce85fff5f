import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import { EINVAL, EIO, EMSGSIZE } from '../../src/sys/constants.js';
import { GsoLimit, groAvailable, gsoAvailable, udpOffload } from '../../src/udp/offload.js';

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

test('GsoLimit: EIO refuses every size, EMSGSIZE/EINVAL that size and larger; warned the first time only', () => {
  const g = new GsoLimit(true);
  assert.equal(g.max, 65507);
  assert.match(g.refuse(EMSGSIZE, 2000) ?? '', /GSO refused \(EMSGSIZE: segments of 2000 bytes\)/);
  assert.equal(g.max, 1999);
  assert.deepEqual(g.refusal, { code: 'EMSGSIZE', segment: 2000 });
  assert.equal(g.refuse(EINVAL, 3000), undefined, 'said once');
  assert.equal(g.max, 1999, 'a larger refused size lowers nothing');
  g.refuse(EIO, 64);
  assert.equal(g.max, 0);
  assert.deepEqual(g.refusal, { code: 'EIO' });
  assert.match(new GsoLimit(true).refuse(EIO, 64) ?? '', /EIO: the device does not take UDP_SEGMENT/);
  assert.equal(new GsoLimit(false).max, 0);
});
