import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchRow, resultsDocument } from '../../src/bench/document.js';
import { guessFormat, renderJson, renderTable } from '../../src/bench/output.js';
import { checkResults, SCHEMA } from '../../src/bench/report/results.js';
import type { PointResult } from '../../src/bench/runner.js';

const results: PointResult[] = [
  {
    name: 'adaptive',
    labels: { policy: 'adaptive' },
    runs: [{ bytesPerSecond: 1e8 }, { bytesPerSecond: 1.2e8 }, { bytesPerSecond: 1.1e8 }],
    median: { bytesPerSecond: 1.1e8 },
    min: { bytesPerSecond: 1e8 },
    max: { bytesPerSecond: 1.2e8 },
  },
];

test('formats follow the unit at the end of the key', () => {
  assert.equal(guessFormat('bytesPerSecond')(125e6), '1 Gbit/s');
  assert.equal(guessFormat('rcvbufBytes')(262144), '256 KiB');
  assert.equal(guessFormat('rttUs')(250), '250 µs');
  assert.equal(guessFormat('seconds')(1.5), '1.5 s');
  assert.equal(guessFormat('lossPct')(0.125), '0.125 %');
  assert.equal(guessFormat('datagramsPerSecond')(2.5e6), '2.5M pkt/s');
  assert.equal(guessFormat('reads')(12), '12');
});

test('the table shows labels and medians with the spread, and with repeats the CV of the first figure', () => {
  const t = renderTable(results).split('\n');
  assert.deepEqual(t.slice(0, 3), [
    'policy    bytesPerSecond     CV',
    '--------  --------------  -----',
    'adaptive  880 Mbit/s ±9%  9.1 %',
  ]);
  const once = renderTable([{ ...results[0], runs: [results[0].runs[0]] }]);
  assert.doesNotMatch(once, /CV/, 'no CV for a point measured once');
  assert.match(t[3], /medians of 3 runs/);
});

test('the document has the stable top-level keys, one row per point, and passes the schema', () => {
  const runs = [{ ...results[0], runs: [...results[0].runs.map((r) => ({ ...r, cc: 'cubic' }))] }];
  const doc = resultsDocument('bench tcp', { scenario: 'tcp' }, [benchRow('tcp', 'local', runs[0])]);
  assert.deepEqual(Object.keys(doc), ['schema', 'version', 'command', 'params', 'host', 'results']);
  assert.equal(doc.schema, SCHEMA);
  assert.match(doc.version, /^\d+\.\d+\.\d+/);
  const back = checkResults(JSON.parse(renderJson(doc)));
  assert.deepEqual(back.results[0], {
    scenario: 'tcp',
    placement: 'local',
    repeats: 3,
    policy: 'adaptive',
    bytesPerSecond: { median: 1.1e8, min: 1e8, max: 1.2e8, values: [1e8, 1.2e8, 1.1e8] },
    cc: 'cubic',
  });
});

test('a text column whose runs disagree keeps every value', () => {
  const r = { ...results[0], runs: [{ cc: 'cubic' }, { cc: 'bbr' }, { cc: 'cubic' }] };
  assert.deepEqual(benchRow('tcp', 'local', r).cc, ['cubic', 'bbr', 'cubic']);
});
