import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  checkResults,
  flattenRow,
  loadResults,
  num,
  type VerdictStatus,
} from '../../../src/bench/report/results.js';
import { UsageError } from '../../../src/errors.js';

const FIXTURE = 'test/fixtures/results-quick.json';
/** The message of the UsageError that `f` throws. */
function checkError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof UsageError, String(err));
    return err.message;
  }
  assert.fail('no error');
}
const minimal = (results: unknown[]) => ({
  schema: 'sockbuf.v1',
  version: '0.1.0',
  command: 'bench tcp',
  params: {},
  host: { kernel: '6.18.0', cpus: 2, sysctls: {} },
  results,
});
/** A row as the runner writes it. */
const point = (labels: Record<string, string>, median: Record<string, number>, extra = {}) => ({
  name: Object.values(labels).join(' '),
  labels,
  runs: [median],
  median,
  min: median,
  max: median,
  ...extra,
});

test('the fixture is a sockbuf.v1 document and unknown keys are tolerated', () => {
  const [doc] = loadResults([FIXTURE]);
  assert.ok(doc.results.length > 20);
  const d = checkResults({
    ...minimal([point({ x: '1' }, { newColumnUs: 3 }, { scenario: 'future-thing', nested: { a: 1 } })]),
    extra: true,
  });
  assert.equal(d.results[0].scenario, 'future-thing');
});

test('every verdict status the seeds give is a valid one (the quick suite wrote "too noisy" that the schema refused)', () => {
  const statuses: VerdictStatus[] = ['reproduced', 'not reproduced', 'skipped', 'too noisy'];
  for (const status of statuses) {
    const d = checkResults({ ...minimal([]), verdicts: [{ seed: '002', text: 't', status, ok: false }] });
    assert.equal(d.verdicts?.[0].status, status);
  }
  assert.throws(
    () => checkResults({ ...minimal([]), verdicts: [{ seed: '002', text: 't', status: 'maybe' }] }),
    /status/,
  );
});

test('a wrong document is a UsageError that names the source and the problem', () => {
  assert.throws(
    () => checkResults({ ...minimal([]), schema: 'sockbuf.v2' }, 'x.json'),
    /x\.json: schema 'sockbuf\.v2'/,
  );
  assert.throws(
    () => checkResults(minimal([{ policy: 'auto' }]), 'y.json'),
    (e: Error) => {
      return e instanceof UsageError && /y\.json: not a sockbuf\.v1.*labels/.test(e.message);
    },
  );
  assert.throws(() => checkResults(minimal([point({ a: 'b' }, { 'bad key': 1 })])), UsageError);
  assert.throws(
    () => checkResults(minimal([point({ a: 'b' }, { x: 1 })]), 'z.json'),
    /z\.json: \/results\/0 has no scenario/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-results-'));
  writeFileSync(join(dir, 'broken.json'), '{"schema":');
  assert.throws(() => loadResults([join(dir, 'broken.json')]), /broken\.json' is not JSON/);
  assert.throws(() => loadResults([join(dir, 'missing.json')]), /cannot read results file/);
  // nested 100 000 deep: refused before it is parsed (the schema check recursed until the stack ran out)
  writeFileSync(
    join(dir, 'deep.json'),
    `{"schema":"sockbuf.v1","results":${'['.repeat(1e5)}${']'.repeat(1e5)}}`,
  );
  assert.throws(
    () => loadResults([join(dir, 'deep.json')]),
    (e: unknown) =>
      e instanceof UsageError && /deep\.json' is not JSON: JSON nested deeper than 32/.test(e.message),
  );
});

test('columns read the same whether a number or a { median, min, max } object', () => {
  assert.equal(num({ scenario: 's', a: 3 }, 'a'), 3);
  assert.equal(num({ scenario: 's', a: { median: 4, min: 1, max: 9 } }, 'a'), 4);
  assert.equal(num({ scenario: 's', a: 'x' }, 'a'), undefined);
});

test('error messages show control characters from the file and its name escaped, and cut long strings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-results-'));
  // an xterm title sequence in the schema, in a key the validator names, and in the file's name
  const title = '\u001b]0;pwned\u0007';
  const schema = checkError(() =>
    checkResults({ ...minimal([]), schema: `sockbuf.${title}${'x'.repeat(5000)}` }),
  );
  assert.match(schema, /schema 'sockbuf\.\\x1b\]0;pwned\\x07x+… \(4,818 more characters\)'/);
  const key = checkError(() =>
    checkResults(minimal([{ scenario: 'tcp', placement: { [title]: 1 } }]), title),
  );
  assert.match(key, /^\\x1b\]0;pwned\\x07: not a sockbuf\.v1/);
  const file = join(dir, `x${title}.json`);
  writeFileSync(file, `{"schema": "\u001b[2J`);
  const parse = checkError(() => loadResults([file]));
  assert.match(parse, /x\\x1b\]0;pwned\\x07\.json' is not JSON/);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
  for (const message of [schema, key, parse]) assert.doesNotMatch(message, /[\u0000-\u001f\u007f-\u009f]/);
});

test("a runner point flattens to labels, { median, min, max } columns, text cells and the placement's numbers", () => {
  const row = flattenRow(
    {
      name: 'auto 8192',
      labels: { policy: 'auto', size: '8192' },
      runs: [
        { bytesPerSecond: 1, wscale: '7,7' },
        { bytesPerSecond: 3, wscale: '7,7' },
      ],
      median: { bytesPerSecond: 2 },
      min: { bytesPerSecond: 1 },
      max: { bytesPerSecond: 3 },
    },
    { scenario: 'tcp', placement: { name: 'lab', rttMs: 2, mode: 'tun' } },
  );
  assert.deepEqual(row, {
    scenario: 'tcp',
    placement: 'lab',
    rttMs: 2,
    wscale: '7,7',
    policy: 'auto',
    size: '8192',
    bytesPerSecond: { median: 2, min: 1, max: 3 },
    repeats: 2,
    name: 'auto 8192',
  });
  assert.equal(num(row, 'size'), 8192);
});

// issue 37: a negative bytesPerSecond rendered as "-933602068.48 × data"; a BOM-prefixed file was refused
test('a negative rate in a results file is refused naming the row and the column', () => {
  for (const row of [
    { scenario: 'drain', reader: 'data', bytesPerSecond: -933602068.48 },
    { scenario: 'drain', reader: 'data', bytesPerSecond: { median: 5, min: -1, max: 9 } },
    { ...point({ reader: 'data' }, { bytesPerSecond: -2 }), scenario: 'drain' },
  ])
    assert.throws(
      () => checkResults(minimal([row]), 'neg.json'),
      (e: unknown) =>
        e instanceof UsageError &&
        /neg\.json: \/results\/0\/bytesPerSecond is -[\d.]+: a rate is never below 0/.test(e.message),
    );
  assert.equal(checkResults(minimal([{ scenario: 'drain', bytesPerSecond: 0 }])).results.length, 1);
});

test('a results file that starts with a byte order mark is read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-bom-'));
  const file = join(dir, 'bom.json');
  writeFileSync(file, `\ufeff${JSON.stringify(minimal([{ scenario: 'drain', bytesPerSecond: 1 }]))}`);
  const [doc] = loadResults([file]);
  assert.equal(doc.results.length, 1);
});
