import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { procSysReadOnly, readHostValues } from '../../src/doctor/host.js';
import { fakeProc, STOCK } from './fakeproc.js';

test('readHostValues reads a fake /proc: sysctls, Udp counters, softnet drops, mountinfo', () => {
  const root = fakeProc(STOCK, { rcvbufErrors: 12, softnetDrops: 3, readOnly: true });
  try {
    const h = readHostValues(root);
    assert.deepEqual(h.sysctls['net.ipv4.tcp_rmem'], [4096, 87380, 6291456]);
    assert.deepEqual(h.sysctls['net.core.rmem_max'], [229376]);
    assert.equal(h.udp?.RcvbufErrors, 12);
    assert.equal(h.softnetDrops, 3);
    assert.equal(h.procSysReadOnly, true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const rw = fakeProc(STOCK);
  try {
    assert.equal(procSysReadOnly(rw), false);
  } finally {
    rmSync(rw, { recursive: true, force: true });
  }
});

test('the real host: values for every sysctl, and the UDP offload probes answer', () => {
  const h = readHostValues('/proc');
  assert.ok((h.sysctls['net.core.rmem_max']?.[0] ?? 0) > 0);
  assert.equal(h.sysctls['net.ipv4.tcp_rmem']?.length, 3);
  assert.equal(typeof h.udpSegment, 'boolean');
  assert.equal(typeof h.udpGro, 'boolean');
});
