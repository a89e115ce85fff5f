import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import {
  clampWarning,
  pinnedReport,
  resolveTcpBuffers,
  udpRequest,
  udpWarning,
} from '../../src/policy/buffers.js';

test("resolveTcpBuffers: 'auto' and absent mean no size; sizes parse with the one units parser", () => {
  assert.deepEqual(resolveTcpBuffers(), { rcvbuf: undefined, sndbuf: undefined });
  assert.deepEqual(resolveTcpBuffers({ rcvbuf: 'auto', sndbuf: 'auto' }), {
    rcvbuf: undefined,
    sndbuf: undefined,
  });
  assert.deepEqual(resolveTcpBuffers({ rcvbuf: '64K', sndbuf: 2000 }), { rcvbuf: 65536, sndbuf: 2000 });
  assert.throws(
    () => resolveTcpBuffers({ rcvbuf: 'big' }),
    (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, /rcvbuf.*'big'/);
      return true;
    },
  );
  assert.throws(() => resolveTcpBuffers({ sndbuf: 0 }), /sndbuf/);
  assert.throws(() => resolveTcpBuffers({ sndbuf: '4G' }), /sndbuf/);
});

test('pinnedReport: clamped when getsockopt reports less than twice the request', () => {
  assert.deepEqual(pinnedReport(65536, 131072, 4194304), {
    requested: 65536,
    effective: 131072,
    limit: 4194304,
    clamped: false,
    autotuning: false,
  });
  const r = pinnedReport(2041500, 425984, 212992); // seed 000's replica_recbuf on a stock kernel
  assert.equal(r.clamped, true);
  const w = clampWarning('rcvbuf', r) ?? '';
  assert.match(w, /SO_RCVBUF 2041500/);
  assert.match(w, /net\.core\.rmem_max = 212992/);
  assert.match(w, /sysctl -w net\.core\.rmem_max=2041500/);
  assert.match(
    clampWarning('sndbuf', pinnedReport(1469880, 425984, 212992)) ?? '',
    /net\.core\.wmem_max=1469880/,
  );
  assert.equal(clampWarning('rcvbuf', pinnedReport(65536, 131072, 212992)), undefined);
});

test('UDP: ask half the target (the kernel doubles it); the warning has was/wanted/got and the sysctl', () => {
  assert.equal(udpRequest(8 * 1024 * 1024), 4 * 1024 * 1024);
  assert.equal(udpRequest(3), 2);
  const w =
    udpWarning({ wanted: 8388608, was: 212992, got: 425984, limit: 212992, forced: false, met: false }) ?? '';
  assert.match(w, /was: 208 kiB, wanted: 8192 kiB, got: 416 kiB/);
  assert.match(w, /sysctl -w net\.core\.rmem_max=4194304/);
  assert.equal(udpWarning({ wanted: 1, was: 2, got: 2, limit: 2, forced: false, met: true }), undefined);
});
