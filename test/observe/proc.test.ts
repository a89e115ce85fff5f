import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  hostInfo,
  parseProcStat,
  parseSnmp,
  parseSoftnetDrops,
  processRunning,
  readSysctl,
  runningInGroup,
} from '../../src/observe/proc.js';

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
