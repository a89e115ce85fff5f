// scripts/dns-bench.ts (issue 45 item 2) for a moment: dns2 stock and under the preload, each loaded by
// dnsperf for 2 s, every answer of the check correct, the table and a verdict printed (no figure is
// asserted: the overload test is test/udp/socket-queue.test.ts). About 15 s; skipped without dnsperf.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/dns-bench.ts');
const noDnsperf = spawnSync('dnsperf', ['-h']).error !== undefined;

test('scripts/dns-bench.ts: dns2 answers dnsperf stock and under the preload, every checked answer right', {
  timeout: 120_000,
  skip: noDnsperf ? 'dnsperf is not installed (Debian: apt-get install dnsperf; .ci/run installs it)' : false,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/dgram-register.js')), 'dist/: run npm run build');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--runs', '1', '--seconds', '2', '--queries', '100', '--check', '20'],
    { encoding: 'utf8', timeout: 100_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const runs = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, number | string>);
  assert.deepEqual(runs.map((x) => x.variant).sort(), ['node:dgram', 'sockbuf/dgram (preload)']);
  for (const x of runs) {
    assert.ok(Number(x.completed) > 0, JSON.stringify(x));
    assert.equal(x.noerror, x.completed, JSON.stringify(x));
    assert.equal(x.correct, 20, `every checked answer right: ${JSON.stringify(x)}`);
  }
  // the preload took: its server's socket reports sockbuf's stats
  assert.ok(
    runs.some((x) => x.mode !== undefined),
    r.stdout,
  );
  assert.match(r.stdout, /issue 45 item 2 \(medians of 1 alternating runs\): (met|NOT met)/);
});
