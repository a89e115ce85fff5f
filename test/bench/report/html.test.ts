import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderHtml } from '../../../src/bench/pages.js';
import { chartPairs } from '../../../src/bench/report/html.js';
import { loadResults, type ResultsDocument } from '../../../src/bench/report/results.js';
import { mergeResults } from '../../../src/bench/report/sources.js';
import { SEEDS } from '../../../src/bench/seeds/index.js';

// A real quick-suite run on this machine (results-quick.json) and a hand-written document with every
// scenario and the lab (results-hand.json).
const FIXTURE = 'test/fixtures/results-quick.json';
const HAND = 'test/fixtures/results-hand.json';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

test('the page is self-contained: Chart.js inlined, no script or link fetched from elsewhere', () => {
  const html = renderHtml(loadResults([FIXTURE]));
  assert.match(html, /Chart\.js v4/);
  const found = /<(script|link|img|iframe)[^>]+(src|href)=|url\(/.exec(html);
  assert.equal(found, null, `the page loads something: ${found?.[0]}`);
});

test('a chart is drawn for each scenario present, beside its seed figure, and none for an absent one', () => {
  const [doc] = loadResults([HAND]);
  const ids = chartPairs(doc, SEEDS).flatMap((s) => s.pairs.map((p) => `${p.ours.id}|${p.seed.id}`));
  for (const want of [
    'tcp-lab|000-policy',
    'rwnd-lab|000-rwnd',
    'tcp-local|000-policy',
    'ping-ratio|001-ping',
  ]) {
    assert.ok(ids.includes(want), `${want} in ${ids}`);
  }
  for (const want of [
    'ping-latency|001-producer',
    'drain|002-drain',
    'streamer|003-batch',
    'udp-loss|004-loss',
  ]) {
    assert.ok(ids.includes(want), `${want} in ${ids}`);
  }
  const noDrain = { ...doc, results: doc.results.filter((r) => r.scenario !== 'drain') };
  const left = chartPairs(noDrain, SEEDS).flatMap((s) => s.pairs.map((p) => p.ours.id));
  assert.ok(!left.includes('drain'));
  assert.ok(!renderHtml(noDrain).includes('id="drain"'));
});

test('several files: every verdict and every table names its file, and each file shows its own host', () => {
  const html = renderHtml(mergeResults(loadResults([FIXTURE, HAND])));
  const files = /test\/fixtures\/results-(quick|hand)\.json/;
  const verdicts = [...html.matchAll(/<li class="(ok|bad|skip)">(.*?)<\/li>/g)].map((m) => m[2]);
  // 10 in the list at the top, 10 again in the seeds' sections
  assert.equal(verdicts.length, 20);
  for (const v of verdicts)
    assert.match(v, new RegExp(`^<span class="file">${files.source}</span> · seed 00\\d: `));
  const captions = [...html.matchAll(/<p class="caption" id="table-\d+">(.*?)<\/p>/g)].map((m) => m[1]);
  assert.ok(captions.length >= 15, captions.join('\n'));
  for (const c of captions) assert.match(c, new RegExp(` · from ${files.source}$`));
  assert.match(
    html,
    /<summary>host of test\/fixtures\/results-quick\.json: Linux 6\.18\.44-fc-v782, 2 CPUs<\/summary>/,
  );
  assert.match(
    html,
    /<summary>host of test\/fixtures\/results-hand\.json: Linux 6\.18\.0, 2 CPUs<\/summary>/,
  );
  // both files draw their charts, under ids of their own
  assert.match(html, /id="f1-tcp-lab"/);
  assert.match(html, /id="f2-tcp-lab"/);
});

test('a file without rows shows no verdict, and says that nothing was judged', () => {
  const [quick] = loadResults([FIXTURE]);
  const html = renderHtml({ ...quick, results: [], skipped: [] });
  assert.doesNotMatch(html, /<li class="(ok|bad|skip)"/);
  assert.match(html, /<li class="none">no result rows: nothing was measured, so no seed is judged\.<\/li>/);
  assert.equal((html.match(/Not measured in these results\./g) ?? []).length, 5);
});

test('the page says what a seed is and links each thread', () => {
  const html = renderHtml(loadResults([FIXTURE]));
  assert.match(html, /A seed is one of 5 public threads — issues and pull requests of other projects —/);
  for (const s of SEEDS) {
    const url = s.url?.replace(/&/g, '&amp;') ?? '';
    assert.ok(url.startsWith('https://'), s.id);
    // once in the list of seeds, once at the head of the seed's section
    assert.equal(html.split(`<a href="${url}">`).length - 1, 2, s.id);
  }
  assert.match(html, /<p class="thread">From <a href="https:\/\/github\.com\/erlang\/otp\/pull\/11491">/);
});

test('strings from a results file reach the page escaped, control characters shown as escapes', () => {
  const [hand] = loadResults([HAND]);
  const hostile: ResultsDocument = {
    ...hand,
    host: { ...hand.host, kernel: '6.18\u001b]0;x\u0007<script>' },
    results: [...hand.results, { scenario: 'mystery', note: '<img src=x onerror=alert(1)>\u202e\u009b' }],
    skipped: [{ scenario: 'x', reason: '</p><script>alert(1)</script>' }],
  };
  const html = renderHtml(hostile);
  assert.doesNotMatch(html.replace(/<script>[\s\S]*?<\/script>/g, ''), CONTROL);
  assert.doesNotMatch(html, /<img src=x/);
  assert.equal((html.match(/<script>/g) ?? []).length, 2, 'Chart.js and the page script only');
  assert.match(html, /6\.18\\x1b\]0;x\\x07&lt;script&gt;/);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;\\u202e\\x9b/);
});

test('a page carries a bounded amount: long strings cut, long tables and charts cut, saying so', () => {
  const [hand] = loadResults([HAND]);
  const big = 'x'.repeat(50e6);
  const tcp = hand.results.find((r) => r.scenario === 'tcp' && r.placement !== 'lab') ?? { scenario: 'tcp' };
  const many = Array.from({ length: 5000 }, (_, i) => ({ ...tcp, size: String(1000 + i) }));
  const html = renderHtml({
    ...hand,
    host: { ...hand.host, kernel: big },
    results: [...hand.results, ...many],
  });
  assert.ok(html.length < 2e6, `${html.length} characters`);
  assert.match(html, /x{200}… \(49,999,800 more characters\)/);
  assert.match(html, /Showing the first 1,000 of 5,012 rows: a page carries at most 1,000 rows a table/);
  assert.match(html, /<p class="notice">These results are too large for one page/);
  // the loopback TCP chart: the first 60 of 5 003 message sizes (5 000 new, 3 of the fixture)
  assert.match(html, /Showing the first 60 of 5,003 groups: the text report has every row\./);
});

test('a merge of many files shows its first 50 on the page, and says so', () => {
  const [hand] = loadResults([HAND]);
  const one = { ...hand, results: hand.results.slice(0, 1), skipped: [] };
  const docs = Array.from({ length: 60 }, () => one);
  const html = renderHtml(
    mergeResults(
      docs,
      docs.map((_, i) => `f${i}.json`),
    ),
  );
  assert.match(html, /Only the first 50 of 60 files are shown\./);
  assert.match(html, /host of f49\.json/);
  assert.doesNotMatch(html, /f50\.json/);
});
