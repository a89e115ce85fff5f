import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadScenario, loadScenarios, scenarioNames } from '../../src/bench/scenario-registry.js';
import { UsageError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'sockbuf-registry-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a scenario module loads by path', async () => {
  const s = await loadScenario(
    fileURLToPath(new URL('../fixtures/bench/pair-scenario.mjs', import.meta.url)),
  );
  assert.equal(s.name, 'pair');
  assert.deepEqual(s.points({}), [{ variant: 'fast' }, { variant: 'slow' }]);
});

test('every built-in scenario loads, is named after its file and has a description', async () => {
  const all = await loadScenarios();
  assert.deepEqual(
    all.map((s) => s.name),
    scenarioNames(),
  );
  for (const s of all) assert.ok(s.description.length > 0, s.name);
});

test('unknown names, unloadable paths and modules that are not scenarios are usage errors', async () => {
  const bad = join(dir, 'not-a-scenario.mjs');
  writeFileSync(bad, 'export default { name: "x" };\n');
  for (const [arg, re] of [
    ['no-such-scenario', /invalid value for <scenario>: 'no-such-scenario' \(known:/],
    [join(dir, 'missing.mjs'), /cannot load it/],
    [bad, /is not a Scenario/],
  ] as const) {
    await assert.rejects(loadScenario(arg), (e: Error) => e instanceof UsageError && re.test(e.message));
  }
});
