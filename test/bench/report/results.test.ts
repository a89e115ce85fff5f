import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkResults, loadResults, mergeResults, num, rowsOf } from '../../../src/bench/report/results.js';
import { UsageError } from '../../../src/policy/units.js';

const FIXTURE = 'test/fixtures/results-quick.json';
const minimal = (results: unknown[]) => ({
  schema: 'sockbuf.v1',
  version: '0.1.0',
  command: 'bench tcp',
  params: {},
  host: { kernel: '6.18.0', cpus: 2, sysctls: {} },
  results,
});

test('the fixture is a sockbuf.v1 document and unknown keys are tolerated', () => {
  const [doc] = loadResults([FIXTURE]);
  assert.ok(doc.results.length > 40);
  checkResults({ ...minimal([{ scenario: 'future-thing', newColumnUs: 3, nested: { a: 1 } }]), extra: true });
});

test('a wrong document is a UsageError that names the source and the problem', () => {
  assert.throws(
    () => checkResults({ ...minimal([]), schema: 'sockbuf.v2' }, 'x.json'),
    /x\.json: schema 'sockbuf\.v2'/,
  );
  assert.throws(
    () => checkResults(minimal([{ policy: 'auto' }]), 'y.json'),
    (e: Error) => {
      return e instanceof UsageError && /y\.json: not a sockbuf\.v1.*scenario/.test(e.message);
    },
  );
  assert.throws(() => checkResults(minimal([{ scenario: 'tcp', 'bad key': 1 }])), UsageError);
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-results-'));
  writeFileSync(join(dir, 'broken.json'), '{"schema":');
  assert.throws(() => loadResults([join(dir, 'broken.json')]), /broken\.json' is not JSON/);
  assert.throws(() => loadResults([join(dir, 'missing.json')]), /cannot read results file/);
});

test('columns read the same whether a number or a { median, min, max } object', () => {
  assert.equal(num({ scenario: 's', a: 3 }, 'a'), 3);
  assert.equal(num({ scenario: 's', a: { median: 4, min: 1, max: 9 } }, 'a'), 4);
  assert.equal(num({ scenario: 's', a: 'x' }, 'a'), undefined);
});

test('merging documents concatenates rows and skips; placement filters default to local', () => {
  const a = checkResults(minimal([{ scenario: 'tcp', policy: 'auto' }]));
  const b = checkResults({
    ...minimal([{ scenario: 'tcp', placement: 'lab' }]),
    skipped: [{ scenario: 'x', reason: 'y' }],
  });
  const m = mergeResults([a, b]);
  assert.equal(m.results.length, 2);
  assert.equal(m.command, 'bench tcp + bench tcp');
  assert.deepEqual(m.skipped, [{ scenario: 'x', reason: 'y' }]);
  assert.equal(rowsOf(m, 'tcp', 'local').length, 1);
  assert.equal(rowsOf(m, 'tcp', 'lab').length, 1);
});
