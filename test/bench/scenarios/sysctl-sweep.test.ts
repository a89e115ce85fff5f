import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import scenario from '../../../src/bench/scenarios/sysctl-sweep.js';
import { UsageError } from '../../../src/errors.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const sysctl = (n: string) => readFileSync(`/proc/sys/net/core/${n}`, 'utf8').trim();

test('without --yes the sweep says what it would change and changes nothing', () => {
  const before = [sysctl('rmem_max'), sysctl('wmem_max')];
  assert.throws(
    () => scenario.params({ values: '229376,1M', rcvbuf: '2041500', duration: '1s' }),
    (e: Error) =>
      e instanceof UsageError &&
      /would set net.core.rmem_max and net.core.wmem_max to each of 224 KiB, 1 MiB/.test(e.message) &&
      /add --yes/.test(e.message),
  );
  assert.throws(
    () => scenario.params({ values: '1X', rcvbuf: '1', duration: '1s', yes: true }),
    /--values: '1X'/,
  );
  const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'bench', 'sysctl-sweep'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /add --yes/);
  assert.deepEqual([sysctl('rmem_max'), sysctl('wmem_max')], before);
});

test("one point for each value, the receiver asks for osiris's buffer", () => {
  const p = { values: [229376, 1048576], rcvbuf: 2041500, duration: '1s' };
  assert.deepEqual(scenario.points(p), [{ rmemMax: '229376' }, { rmemMax: '1048576' }]);
  const e = scenario.ends({ rmemMax: '229376' }, p);
  assert.deepEqual('sockbuf' in e.receiver && e.receiver.sockbuf.slice(0, 6), [
    'sink',
    'tcp',
    '--listen',
    '{host}:0',
    '--rcvbuf',
    '2041500',
  ]);
});

test('a sweep across a lab restores the sysctls and leaves no state', {
  skip: process.getuid?.() !== 0 && 'needs root (host sysctls, lab)',
}, () => {
  // The value it sets is the one the host has: other tests on this host see no change.
  const before = [sysctl('rmem_max'), sysctl('wmem_max')];
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      MAIN,
      'bench',
      'sysctl-sweep',
      '--values',
      before[0],
      '--duration',
      '1s',
      '--repeat',
      '1',
      '--yes',
      '--lab',
      'rtt=2ms',
      '--json',
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { results: { bytesPerSecond: { median: number } }[] };
  assert.ok(doc.results[0].bytesPerSecond.median > 0);
  assert.deepEqual([sysctl('rmem_max'), sysctl('wmem_max')], before);
  assert.equal(existsSync(`/run/sockbuf/sysctl-${r.pid}.json`), false);
});
