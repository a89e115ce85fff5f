// The hostile sweep over every command's options (test/fuzz/cli-sweep.ts), one hostile value per
// option in turn (the full matrix is `npm run fuzz -- --cli`): refused in one line naming the option
// and the value, control characters escaped, within its bound, nothing left behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cases, HOSTILE, sweep } from './cli-sweep.js';

const DIST = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

test('every option of every command refuses a hostile value cleanly', { timeout: 600_000 }, async () => {
  assert.ok(existsSync(DIST), 'dist/ is built (npm run build)');
  const all = await cases(HOSTILE);
  // one value per option, the values in turn, so that each of them meets several commands
  const byOption = new Map<string, typeof all>();
  for (const c of all)
    byOption.set(`${c.command} ${c.option}`, [...(byOption.get(`${c.command} ${c.option}`) ?? []), c]);
  const one = [...byOption.values()].map((list, i) => list[i % list.length]);
  const seen = byOption;
  assert.ok(seen.size > 100, `${seen.size} options found`);
  const r = await sweep(one, 6);
  const failures = r.failures.map((f) => `${f.argv}\n    ${f.problems.join('\n    ')}`).join('\n');
  assert.equal(r.failures.length, 0, `${r.failures.length} of ${r.cases}:\n${failures}`);
  assert.deepEqual(r.leftoverNetns, []);
});
