import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { hostInfo, parseSnmp, parseSoftnetDrops, readSysctl } from '../../src/observe/proc.js';
import { parseProcStat, processRunning, runningInGroup } from '../../src/sys/process.js';

test('parseSnmp pairs header and value lines per protocol', () => {
  const t = 'Udp: InDatagrams NoPorts InErrors RcvbufErrors\nUdp: 10 2 3 4\nTcp: RtoMin\nTcp: 200\n';
  assert.deepEqual(parseSnmp(t), {
    Udp: { InDatagrams: 10, NoPorts: 2, InErrors: 3, RcvbufErrors: 4 },
    Tcp: { RtoMin: 200 },
  });
});

test('parseSoftnetDrops sums the hex second column', () => {
  assert.equal(parseSoftnetDrops('0000abcd 00000010 0\n00000001 0000000a 0\n'), 26);
});

test('the real host has buffer sysctls and a kernel', () => {
  const h = hostInfo();
  assert.match(h.kernel, /^\d+\.\d+/);
  assert.ok(Number(h.sysctls['net.core.rmem_max']) > 0);
  assert.equal(readSysctl('net.ipv4.tcp_rmem')?.length, 3);
});

test('parseProcStat reads state, parent and group past a command name with spaces and parens', () => {
  assert.deepEqual(parseProcStat('123 (a (b) c) S 1 77 77 0 -1'), { state: 'S', ppid: 1, pgrp: 77 });
});

test('processRunning and runningInGroup see this process, and not a reaped child', () => {
  assert.ok(processRunning(process.pid));
  assert.ok(runningInGroup(readProcPgrp()).includes(process.pid));
  const r = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']);
  assert.equal(processRunning(Number(String(r.stdout).trim())), false);
});

function readProcPgrp(): number {
  return parseProcStat(readFileSync(`/proc/${process.pid}/stat`, 'utf8'))?.pgrp ?? -1;
}

// found by the hostile sweep (issue 23): a proc root that is not the kernel's gave NaN and Infinity
// counters and sysctls of 1e305, which doctor then printed ("Infinity TiB")
test('a counter or sysctl that is not a whole number the kernel would print is left out, not NaN', async () => {
  const snmp = parseSnmp('Udp: InDatagrams RcvbufErrors InErrors Bad\nUdp: 12 x 99999999999999999999 -1\n');
  assert.deepEqual(snmp, { Udp: { InDatagrams: 12 } });
  assert.equal(parseSoftnetDrops('0 zz\n0 10\n0 ffffffffffffffffff\n'), 16);
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const root = mkdtempSync('/tmp/sockbuf-proc-');
  try {
    mkdirSync(`${root}/sys/net/core`, { recursive: true });
    mkdirSync(`${root}/sys/net/ipv4`, { recursive: true });
    writeFileSync(`${root}/sys/net/core/rmem_max`, '2.5e305\n');
    writeFileSync(`${root}/sys/net/core/wmem_max`, '\u001b]0;x\u0007\n');
    writeFileSync(`${root}/sys/net/ipv4/tcp_rmem`, '4096\t131072\t6291456\n');
    assert.equal(readSysctl('net.core.rmem_max', root), undefined);
    assert.equal(readSysctl('net.core.wmem_max', root), undefined);
    assert.deepEqual(readSysctl('net.ipv4.tcp_rmem', root), [4096, 131072, 6291456]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
