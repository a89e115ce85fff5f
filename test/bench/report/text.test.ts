import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadResults, type ResultsDocument } from '../../../src/bench/report/results.js';
import { mergeResults } from '../../../src/bench/report/sources.js';
import { textReport } from '../../../src/bench/report/text.js';
import { SEEDS } from '../../../src/bench/seeds/index.js';

const QUICK = 'test/fixtures/results-quick.json';
const HAND = 'test/fixtures/results-hand.json';
// C0 (but the newlines that end lines), DEL and C1
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

test('several files: every table, verdict and skip names its file, and each file says its own host', () => {
  const text = textReport(mergeResults(loadResults([QUICK, HAND])), SEEDS);
  assert.match(
    text,
    /^test\/fixtures\/results-quick\.json: sockbuf bench .*Linux 6\.18\.44-fc-v782, 2 CPUs$/m,
  );
  assert.match(text, /^test\/fixtures\/results-hand\.json: sockbuf bench .*Linux 6\.18\.0, 2 CPUs$/m);
  const headings = text.split('\n').filter((l) => l.startsWith('[seed '));
  assert.ok(headings.length >= 14, headings.join('\n'));
  for (const h of headings) assert.match(h, / · from test\/fixtures\/results-(quick|hand)\.json$/);
  const verdicts = text.split('\n').filter((l) => /seed 00\d: /.test(l));
  assert.equal(verdicts.length, 10, verdicts.join('\n'));
  for (const v of verdicts) assert.match(v, /^\[test\/fixtures\/results-(quick|hand)\.json\] seed 00\d: /);
  assert.match(text, /^\[test\/fixtures\/results-hand\.json\] skipped sysctl-sweep: /m);
  // the seed 000 lab verdict of each file from that file's rows: 0.19 × in one, 0.31 × in the other
  assert.match(
    text,
    /^\[test\/fixtures\/results-quick\.json\] seed 000: not reproduced — pinned rcvbuf 0\.19 ×/m,
  );
  assert.match(text, /^\[test\/fixtures\/results-hand\.json\] seed 000: reproduced — pinned rcvbuf 0\.31 ×/m);
});

test('a file without rows judges nothing, whatever verdicts it carries, and says so', () => {
  const [quick] = loadResults([QUICK]);
  assert.equal(quick.verdicts?.filter((v) => v.ok).length, 4);
  const empty: ResultsDocument = { ...quick, results: [], skipped: [] };
  const text = textReport(empty, SEEDS);
  assert.doesNotMatch(text, /reproduced/);
  assert.equal(text, 'no result rows: nothing was measured, so no seed is judged');
  // beside a file that has rows: that one is judged, the empty one says it has none
  const both = textReport(mergeResults([empty, loadResults([HAND])[0]], ['empty.json', 'hand.json']), SEEDS);
  assert.match(both, /^\[empty\.json\] no result rows: nothing was measured, so no seed is judged$/m);
  assert.doesNotMatch(both, /^\[empty\.json\] seed/m);
  assert.match(both, /^\[hand\.json\] seed 000: reproduced/m);
});

test('strings from a results file reach the terminal with their control characters escaped', () => {
  const [hand] = loadResults([HAND]);
  const title = '\u001b]0;pwned\u0007';
  const hostile: ResultsDocument = {
    ...hand,
    host: { ...hand.host, kernel: `6.18${title}` },
    command: `bench${title}`,
    results: [
      ...hand.results.map((r) => (r.scenario === 'drain' ? { ...r, reader: `${r.reader}\u001b[2J` } : r)),
      { scenario: 'mystery', note: `a\u009b31mred\u202eb`, [`k${title}`]: 'v' },
      { scenario: 'udp', placement: `lab${title}`, path: 'batch\r', sent: 10, received: 10 },
    ],
    skipped: [{ scenario: `x${title}`, reason: `y\u001b[1A` }],
  };
  for (const text of [
    textReport(hostile, SEEDS),
    textReport(mergeResults([hostile, hand], [`a${title}.json`, 'b.json']), SEEDS),
  ]) {
    assert.doesNotMatch(text, CONTROL);
    assert.match(text, /adaptive:max1M\\x1b\[2J/);
    assert.match(text, /a\\x9b31mred\\u202eb/);
    assert.match(text, /skipped x\\x1b\]0;pwned\\x07: y\\x1b\[1A/);
  }
  assert.match(textReport(hostile, SEEDS), /\(lab\\x1b\]0;pwned\\x07\)/);
});

test('a 50 MB string from a results file is printed cut, saying how much was left out', () => {
  const [hand] = loadResults([HAND]);
  const big = 'x'.repeat(50e6);
  const text = textReport(
    { ...hand, results: [{ scenario: 'drain', reader: big }], skipped: [{ scenario: 'x', reason: big }] },
    SEEDS,
  );
  assert.ok(text.length < 10_000, `${text.length} characters`);
  assert.match(text, /x{200}… \(49,999,800 more characters\)/);
});
