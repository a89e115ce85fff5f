// scripts/dgram-bench.ts's echo part runs for a moment: the C echo server (scripts/c/udp.c echo)
// builds, answers every query of both implementations, and each client placement (free to use both
// CPUs, pinned to one) gets its line per figure. No figure is asserted: the benchmark measures.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/dgram-bench.ts', import.meta.url));

test('scripts/dgram-bench.ts --only echo: a C echo server answers both implementations, in both placements', {
  timeout: 120_000,
}, () => {
  const json = join(tmpdir(), `sockbuf-dgram-bench-${process.pid}.json`);
  try {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', SCRIPT, '--only', 'echo', '--echo', '30', '--repeat', '1', '--json', json],
      { encoding: 'utf8', timeout: 90_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const lines = JSON.parse(readFileSync(json, 'utf8')) as {
      what: string;
      key: string;
      node: number;
      sockbuf: number;
    }[];
    for (const cpus of ['any', 'one'])
      for (const key of ['medianMs', 'p99Ms', 'over2Ms']) {
        const l = lines.find((x) => x.what.endsWith(`client on ${cpus} CPU`) && x.key === key);
        assert.ok(l, `${cpus} ${key}: ${r.stdout}`);
        assert.ok(Number.isFinite(l.node) && Number.isFinite(l.sockbuf), JSON.stringify(l));
      }
    const median = lines.find((x) => x.key === 'medianMs');
    assert.ok(median && median.node > 0 && median.sockbuf > 0, JSON.stringify(median));
  } finally {
    rmSync(json, { force: true });
  }
});
