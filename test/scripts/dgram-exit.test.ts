// Issue 45's "no abort, ever": 50 sockbuf/dgram processes of each ending (natural end, process.exit()
// from a SIGTERM handler, SIGTERM with no handler, process.exit() during traffic), under the preload
// and with a plain import, four at a time (scripts/lib/dgram-exit.ts): none aborts (exit 134, "FATAL
// ERROR" on stderr) and each ends as expected. Before the reader thread's exit handshake
// (shared-ring.ts's LIFE), 1 in ~40 aborted. 400 processes: ~100 s on a quiet 2-CPU host.
// scripts/dgram-exit.ts runs the full 500 of each.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runExits } from '../../scripts/lib/dgram-exit.js';

test('400 sockbuf/dgram exits (4 endings × preload and plain import × 50): no abort, each as expected', {
  timeout: 900_000,
}, async () => {
  assert.ok(existsSync(join(ROOT, 'dist/dgram-register.js')), 'dist/: run npm run build');
  const outcomes = await runExits({ runs: 50, parallel: 4 });
  const bad = outcomes.filter((o) => o.aborts > 0 || o.unexpected > 0);
  assert.deepEqual(
    bad.map(
      (o) =>
        `${o.mode} ${o.kind}: ${o.aborts} aborts, ${o.unexpected} unexpected of ${o.runs}\n${o.samples.join('\n')}`,
    ),
    [],
  );
  assert.equal(
    outcomes.reduce((a, o) => a + o.runs, 0),
    400,
  );
});
