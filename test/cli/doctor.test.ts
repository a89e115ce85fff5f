// `sockbuf doctor` as a command against fake /proc trees: the table, --json, --sysctl-conf, exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkResults } from '../../src/bench/report/results.js';
import { fakeProc, GOOD, STOCK } from '../doctor/fakeproc.js';
import { SOCKBUF_ARGV } from './argv.js';

const good = fakeProc(GOOD);
const stock = fakeProc(STOCK, { rcvbufErrors: 9, readOnly: true });
after(() => {
  rmSync(good, { recursive: true, force: true });
  rmSync(stock, { recursive: true, force: true });
});

const doctor = (...args: string[]) =>
  spawnSync(process.execPath, [...SOCKBUF_ARGV, 'doctor', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });

test('a host that holds the targets (SOCKBUF_PROC_ROOT): the table, exit 0', () => {
  const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, 'doctor'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SOCKBUF_PROC_ROOT: good },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^net\.core\.rmem_max\s+8388608\s+4194304\s+ok$/m);
  assert.match(r.stdout, /All checks hold\./);
});

test('a stock host: findings with what they limit and the value to set, exit 1', () => {
  const r = doctor('--proc-root', stock, '--bandwidth', '10gbit', '--rtt', '2ms');
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, /^! net\.core\.rmem_max: a pinned SO_RCVBUF is clamped to rmem_max = 224 KiB/m);
  assert.match(
    r.stdout,
    /recommended \(on the host: \/proc\/sys is read-only here\): sysctl -w net\.core\.rmem_max=4194304/,
  );
  assert.match(r.stdout, /sysctl -w net\.ipv4\.tcp_wmem="4096 20480 8388608"/);
  assert.match(r.stdout, /^! Udp\.RcvbufErrors: 9 since boot/m);
});

test('--json: one sockbuf.v1 document, each item with value, target, status, explanation', () => {
  const r = doctor('--proc-root', stock, '--json', '--rtt', '10ms');
  assert.equal(r.status, 1, r.stderr);
  const doc = checkResults(JSON.parse(r.stdout));
  assert.equal(doc.command, 'doctor');
  assert.deepEqual(doc.params, {
    bitsPerSecond: 10e9,
    rttSeconds: 0.01,
    udpRcvbufBytes: 8388608,
    procRoot: stock,
  });
  assert.equal(doc.host.kernel, '6.1.0-fake');
  assert.equal(doc.host.sysctls['net.core.rmem_max'], '229376');
  const rmem = doc.results.find((f) => f.name === 'net.core.rmem_max');
  assert.deepEqual(Object.keys(rmem ?? {}).sort(), [
    'explanation',
    'kind',
    'name',
    'recommended',
    'scenario',
    'status',
    'target',
    'value',
  ]);
  assert.equal(rmem?.target, 12_500_000); // 10 Gbit/s × 10 ms
  assert.equal(rmem?.status, 'low');
});

test('--sysctl-conf prints an /etc/sysctl.d file and writes nothing', () => {
  const r = doctor('--proc-root', stock, '--sysctl-conf');
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, /^# \/etc\/sysctl\.d\/60-sockbuf\.conf$/m);
  assert.match(r.stdout, /^net\.core\.rmem_max = 4194304$/m);
  assert.match(r.stdout, /^net\.ipv4\.tcp_wmem = 4096 20480 8388608$/m);
  assert.match(r.stdout, /install it on the host/);
  assert.equal(readFileSync(join(stock, 'sys/net/core/rmem_max'), 'utf8'), '229376\n', 'unchanged');
});

test('bad usage exits 2 naming the option', () => {
  for (const [opt, val] of [
    ['--rtt', 'banana'],
    ['--bandwidth', 'fast'],
  ]) {
    const r = doctor(opt, val);
    assert.equal(r.status, 2, `${opt} ${val}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${opt}.*'${val}'`));
    assert.equal(r.stdout, '');
  }
});
