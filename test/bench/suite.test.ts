import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkResults, num } from '../../src/bench/report/results.js';
import { type Seed, suiteExitCode } from '../../src/bench/seeds/index.js';
import { judge } from '../../src/bench/seeds/seed.js';
import { entryCommand, runSuite, SUITE, type SuiteEntry, skipReason } from '../../src/bench/suite.js';
import { EnvironmentError } from '../../src/errors.js';
import { UsageError } from '../../src/index.js';

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
  const nc = entry('x', { scenario: 'tcp', needs: [{ command: 'nc', package: 'netcat-openbsd' }] });
  assert.equal(
    skipReason(nc, ['tcp'], true, false, () => false),
    'nc is not installed (Debian: netcat-openbsd)',
  );
  assert.equal(
    skipReason(nc, ['tcp'], true, false, (c) => c === 'nc'),
    undefined,
  );
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
  assert.match(reasons.lab, process.getuid?.() === 0 ? /refused: no lab in this test/ : /needs root/);
  assert.ok(events.includes('start pair'));
  assert.equal(doc.params.suite, 'quick');
  assert.ok((doc.seconds ?? -1) >= 0);
});

test('a seed that falls short of its criterion fails the suite (exit 1); skipped seeds do not; --repeat overrides', {
  timeout: 60_000,
}, async () => {
  // A seed judged on the pair fixture: fast is 2 × slow, so "≥ 3 ×" falls short and "≥ 1.5 ×" holds.
  const pairSeed = (factor: number): Seed => ({
    id: '002',
    title: 'pair',
    thread: 'a test',
    finding: 'fast is twice slow',
    criterion: `fast ≥ ${factor} × slow`,
    figures: [],
    entries: [entry('pair')],
    tables: ['pair'],
    charts: () => [],
    verdict: (doc) => {
      const v = (variant: string) =>
        num(doc.results.find((r) => r.variant === variant) ?? { scenario: '' }, 'value');
      const fast = v('fast');
      const slow = v('slow');
      if (fast === undefined || !slow) return undefined;
      return judge(pairSeed(factor), `fast ${fast} vs slow ${slow}`, fast >= factor * slow);
    },
  });
  const skippedSeed: Seed = {
    ...pairSeed(1),
    id: '003',
    entries: [entry('lab', { seed: '003', placement: 'lab' })],
    verdict: () => undefined,
  };
  const short = await runSuite({
    seeds: [pairSeed(3), skippedSeed],
    repeat: 2,
    withLab: async () => {
      throw new EnvironmentError('no lab in this test');
    },
  });
  const v = short.verdicts ?? [];
  assert.deepEqual(
    v.map((x) => [x.seed, x.status]),
    [
      ['002', 'not reproduced'],
      ['003', 'skipped'],
    ],
  );
  assert.match(v[0].text, /^seed 002: not reproduced — fast 2 vs slow 1 \(criterion: fast ≥ 3 × slow\)$/);
  assert.match(v[1].text, /^seed 003: skipped: lab: /);
  assert.equal(suiteExitCode(short), 1);
  assert.deepEqual(
    checkResults(JSON.parse(JSON.stringify(short)), 'suite').results.map((r) => r.repeats),
    [2, 2],
  );
  // the recorded command is the one that ran: --repeat 2, not the entry's own (issue 37)
  const entries = short.params.entries as { command: string }[];
  assert.match(entries[0].command, /--repeat 2$/);
  const holds = await runSuite({
    seeds: [pairSeed(1.5), skippedSeed],
    withLab: async () => {
      throw new EnvironmentError('no lab in this test');
    },
  });
  assert.deepEqual(
    (holds.verdicts ?? []).map((x) => x.status),
    ['reproduced', 'skipped'],
  );
  assert.equal(suiteExitCode(holds), 0);
});

test('an entry whose options its scenario refuses is a UsageError before anything runs, not a skip', async () => {
  const events: string[] = [];
  await assert.rejects(
    runSuite({
      entries: [entry('pair'), entry('badopts', { quick: ['--no-such-option'] })],
      onEntry: (e, ev) => events.push(`${ev} ${e.id}`),
    }),
    (err: unknown) =>
      err instanceof UsageError && /bad options for pair \(--no-such-option\)/.test(err.message),
  );
  assert.deepEqual(events, []);
});

test('runSuite checks repeat before anything runs: 1 to 1000, a UsageError naming repeat', async () => {
  for (const repeat of [0, 1.5, 1001, 'x', '0']) {
    await assert.rejects(
      runSuite({ repeat, entries: [] }),
      (err: unknown) => err instanceof UsageError && err.option === 'repeat',
      String(repeat),
    );
  }
});
