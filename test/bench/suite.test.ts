import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkResults } from '../../src/bench/report/results.js';
import { entryCommand, runSuite, SUITE, type SuiteEntry, skipReason } from '../../src/bench/suite.js';
import { EnvironmentError } from '../../src/policy/units.js';

const PAIR = fileURLToPath(new URL('../fixtures/bench/pair-scenario.mjs', import.meta.url));
const entry = (id: string, extra: Partial<SuiteEntry> = {}): SuiteEntry => ({
  id,
  title: id,
  seed: '002',
  scenario: PAIR,
  quick: [],
  full: ['--values', '5'],
  repeat: { quick: 1, full: 1 },
  placement: 'local',
  ...extra,
});

test('the suite covers every seed, and each entry says the command that measures it again', () => {
  assert.deepEqual([...new Set(SUITE.map((e) => e.seed))].sort(), ['000', '001', '002', '003', '004']);
  const lab = SUITE.find((e) => e.placement === 'lab') as SuiteEntry;
  assert.match(entryCommand(lab), /^sockbuf lab --rtt 2ms --bandwidth 5gbit -- bench tcp .*--repeat 1$/);
  assert.match(entryCommand(SUITE.find((e) => e.id === 'drain') as SuiteEntry), /^sockbuf bench drain /);
});

test('skip reasons: a scenario not built in yet names its issue; the lab needs root; sysctls need --yes', () => {
  assert.equal(
    skipReason(entry('x', { scenario: 'nope', issue: 9 }), ['tcp']),
    "scenario 'nope' is not built in yet (issue 9)",
  );
  assert.equal(
    skipReason(entry('x', { scenario: 'tcp', placement: 'lab' }), ['tcp'], false),
    'the lab needs root (network namespaces, tun devices)',
  );
  assert.equal(skipReason(entry('x', { scenario: 'tcp' }), ['tcp'], false), undefined);
  const sweep = entry('x', { scenario: 'tcp', changesHost: true });
  assert.match(skipReason(sweep, ['tcp'], true) ?? '', /changes host sysctls.*--yes/);
  assert.equal(skipReason(sweep, ['tcp'], true, true), undefined);
});

test('runSuite: runs what it can, records skips and failures with reasons, one valid document', {
  timeout: 60_000,
}, async () => {
  const events: string[] = [];
  const doc = await runSuite({
    entries: [
      entry('pair'),
      entry('missing', { scenario: 'not-a-scenario', issue: 42 }),
      entry('broken', { quick: ['--mode', 'fail-sender'] }),
      entry('badopts', { quick: ['--no-such-option'] }),
      entry('lab', { placement: 'lab', lab: 'rtt=2ms' }),
    ],
    onEntry: (e, ev) => events.push(`${ev} ${e.id}`),
    withLab: async () => {
      throw new EnvironmentError('no lab in this test');
    },
  });
  const flat = checkResults(JSON.parse(JSON.stringify(doc)), 'suite');
  assert.equal(flat.results.length, 2);
  assert.deepEqual(
    flat.results.map((r) => [r.scenario, r.placement, r.variant]),
    [
      ['pair', 'local', 'fast'],
      ['pair', 'local', 'slow'],
    ],
  );
  const reasons = Object.fromEntries((doc.skipped ?? []).map((s) => [s.scenario, s.reason]));
  assert.match(reasons.missing, /'not-a-scenario' is not built in yet \(issue 42\)/);
  assert.match(reasons.broken, /^failed: /);
  assert.match(reasons.badopts, /bad options for pair/);
  assert.match(reasons.lab, process.getuid?.() === 0 ? /refused: no lab in this test/ : /needs root/);
  assert.ok(events.includes('start pair'));
  assert.equal(doc.params.suite, 'quick');
  assert.ok((doc.seconds ?? -1) >= 0);
});
