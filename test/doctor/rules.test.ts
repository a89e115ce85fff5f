import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  diagnose,
  type Finding,
  type HostValues,
  hasProblems,
  roundUp,
  sysctlConf,
} from '../../src/doctor/rules.js';

const T = { bitsPerSecond: 10e9, rttSeconds: 0.002, udpRcvbufBytes: 8 * 1024 * 1024 };

function host(over: Partial<HostValues['sysctls']> = {}, extra: Partial<HostValues> = {}): HostValues {
  return {
    sysctls: {
      'net.core.rmem_max': [8388608],
      'net.core.wmem_max': [8388608],
      'net.core.rmem_default': [212992],
      'net.core.wmem_default': [212992],
      'net.core.netdev_max_backlog': [1000],
      'net.ipv4.tcp_rmem': [4096, 131072, 33554432],
      'net.ipv4.tcp_wmem': [4096, 16384, 16777216],
      'net.ipv4.tcp_moderate_rcvbuf': [1],
      'net.ipv4.tcp_window_scaling': [1],
      'net.ipv4.udp_mem': [575799, 767732, 1151598],
      ...over,
    },
    udp: { RcvbufErrors: 0, InErrors: 0, SndbufErrors: 0 },
    softnetDrops: 0,
    procSysReadOnly: false,
    udpSegment: true,
    udpGro: true,
    ...extra,
  };
}
const find = (fs: Finding[], name: string) => fs.find((f) => f.name === name) as Finding;

test('a host above every target: all ok, exit 0, nothing to write', () => {
  const fs = diagnose(host(), T);
  assert.deepEqual(
    fs.filter((f) => !['ok', 'info'].includes(f.status)).map((f) => f.name),
    [],
  );
  assert.equal(hasProblems(fs), false);
  assert.match(sysctlConf(fs, T, false, 'test'), /# Nothing to change/);
});

test("seed 000's stock host: pinned buffers clamped to 224 KiB, what that caps, and what 10 Gbit/s needs", () => {
  const fs = diagnose(
    host({
      'net.core.rmem_max': [229376],
      'net.core.wmem_max': [229376],
      'net.ipv4.tcp_wmem': [4096, 20480, 4194304],
    }),
    T,
  );
  const r = find(fs, 'net.core.rmem_max');
  assert.equal(r.status, 'low');
  assert.equal(r.value, 229376);
  assert.equal(r.target, 4194304); // the UDP target (8 MiB reported = 4 MiB asked) beats the BDP (2.5 MB)
  assert.match(
    r.explanation,
    /clamped to rmem_max = 224 KiB, which caps one stream at about 917\.5 Mbit\/s at 2 ms RTT/,
  );
  assert.match(r.explanation, /10 Gbit\/s needs 2\.38 MiB/);
  assert.equal(r.recommended, '4194304');
  const w = find(fs, 'net.core.wmem_max');
  assert.equal(w.target, 2_500_000);
  assert.equal(w.recommended, '4194304');
  const tw = find(fs, 'net.ipv4.tcp_wmem');
  assert.equal(tw.status, 'low');
  assert.match(tw.explanation, /caps one stream at about 8\.39 Gbit\/s/);
  assert.equal(tw.recommended, '4096 20480 8388608');
  assert.equal(find(fs, 'net.ipv4.tcp_rmem').status, 'ok');
  assert.equal(hasProblems(fs), true);
  const conf = sysctlConf(fs, T, false, 'test');
  assert.match(conf, /^net\.core\.rmem_max = 4194304$/m);
  assert.match(conf, /^net\.core\.wmem_max = 4194304$/m);
  assert.match(conf, /^net\.ipv4\.tcp_wmem = 4096 20480 8388608$/m);
  assert.doesNotMatch(conf, /tcp_rmem =/);
});

test('targets move the verdict: the same host is fine for 1 Gbit/s at 1 ms', () => {
  const fs = diagnose(host({ 'net.core.rmem_max': [229376], 'net.core.wmem_max': [229376] }), {
    bitsPerSecond: 1e9,
    rttSeconds: 0.001,
    udpRcvbufBytes: 256 * 1024,
  });
  assert.equal(find(fs, 'net.core.rmem_max').status, 'ok');
  assert.equal(find(fs, 'net.core.wmem_max').status, 'ok');
});

test('autotuning or window scaling off, a small backlog, a small udp_mem', () => {
  const fs = diagnose(
    host({
      'net.ipv4.tcp_moderate_rcvbuf': [0],
      'net.ipv4.tcp_window_scaling': [0],
      'net.core.netdev_max_backlog': [100],
      'net.ipv4.udp_mem': [100, 200, 300],
    }),
    T,
  );
  const m = find(fs, 'net.ipv4.tcp_moderate_rcvbuf');
  assert.equal(m.status, 'off');
  assert.match(m.explanation, /tcp_rmem default = 128 KiB, about 262\.1 Mbit\/s at 2 ms RTT/);
  const ws = find(fs, 'net.ipv4.tcp_window_scaling');
  assert.equal(ws.status, 'off');
  assert.match(ws.explanation, /at most 64 KiB, about 262\.1 Mbit\/s/);
  const b = find(fs, 'net.core.netdev_max_backlog');
  assert.equal(b.status, 'low');
  assert.equal(b.target, 1000);
  assert.equal(b.recommended, '1000');
  assert.equal(find(fs, 'net.ipv4.udp_mem').status, 'low');
  // udp_mem counts pages: an 8 MiB buffer is 2048 pages of 4 KiB, 128 of 64 KiB (arm64, ppc64)
  const udpMem = (pageSize?: number) =>
    find(diagnose(host({ 'net.ipv4.udp_mem': [100, 200, 1000] }, { pageSize }), T), 'net.ipv4.udp_mem');
  assert.equal(udpMem().status, 'low');
  assert.equal(udpMem(65536).status, 'ok');
  assert.match(udpMem(65536).explanation, /64 KiB pages/);
  assert.equal(
    find(diagnose(host(), { ...T, bitsPerSecond: 100e9 }), 'net.core.netdev_max_backlog').target,
    8334,
  );
});

test('counters above zero are findings; missing sysctls and counters are not', () => {
  const fs = diagnose(
    host({}, { udp: { RcvbufErrors: 5, InErrors: 5, SndbufErrors: 0 }, softnetDrops: 7 }),
    T,
  );
  assert.equal(find(fs, 'Udp.RcvbufErrors').status, 'drops');
  assert.match(find(fs, 'Udp.RcvbufErrors').explanation, /^5 since boot/);
  assert.equal(find(fs, 'softnet.dropped').status, 'drops');
  assert.match(find(fs, 'softnet.dropped').explanation, /netdev_max_backlog = 1000/);
  assert.equal(find(fs, 'Udp.SndbufErrors').status, 'ok');
  assert.equal(hasProblems(fs), true);
  const none = diagnose({ sysctls: {}, procSysReadOnly: false }, T);
  assert.ok(none.filter((f) => f.kind === 'sysctl').every((f) => f.status === 'missing'));
  assert.equal(hasProblems(none), false);
});

test('read-only /proc/sys and the UDP offloads are reported as such', () => {
  const fs = diagnose(host({ 'net.core.rmem_max': [1000] }, { procSysReadOnly: true, udpGro: false }), T);
  assert.equal(find(fs, '/proc/sys').value, 'read-only');
  assert.match(find(fs, '/proc/sys').explanation, /on the host/);
  assert.match(sysctlConf(fs, T, true, 'test'), /read-only where this ran: install it on the host/);
  assert.equal(find(fs, 'UDP_SEGMENT').value, true);
  assert.equal(find(fs, 'UDP_GRO').status, 'info');
  assert.equal(roundUp(2_500_000), 4194304);
  assert.equal(roundUp(4194304), 4194304);
});

// issue 37: 10 Tbit/s at 60 s asked for rmem_max=4503599627370496, which no kernel takes (an int)
test('recommendations never exceed what the kernel takes (INT_MAX), and say when no setting reaches the target', () => {
  const fs = diagnose(host(), { ...T, bitsPerSecond: 10e12, rttSeconds: 60 });
  for (const name of ['net.core.rmem_max', 'net.core.wmem_max', 'net.core.netdev_max_backlog']) {
    const f = find(fs, name);
    assert.ok(Number(f.recommended) <= 2 ** 31 - 1, `${name} = ${f.recommended}`);
  }
  for (const name of ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']) {
    const f = find(fs, name);
    assert.ok(Number(f.recommended?.split(' ')[2]) <= 2 ** 31 - 1, `${name} = ${f.recommended}`);
    assert.match(f.explanation, /takes at most 2147483647/);
  }
  assert.match(find(fs, 'net.core.rmem_max').explanation, /no setting reaches the target/);
  assert.doesNotMatch(
    sysctlConf(fs, { ...T, bitsPerSecond: 10e12, rttSeconds: 60 }, false, 'now'),
    /\d{11,}/,
  );
});
