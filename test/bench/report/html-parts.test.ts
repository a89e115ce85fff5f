import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_PAGE_ROWS } from '../../../src/bench/report/bounds.js';
import { capChart, gridHtml, PageState, txt } from '../../../src/bench/report/html-parts.js';

const head = [
  { label: 'name', numeric: false },
  { label: 'n', numeric: true },
];

test('a table is titled outside its keyboard-reachable scroll box, each cell labelled for the narrow layout', () => {
  const page = new PageState();
  const html = gridHtml({ caption: 'T', head, rows: [['a<b', '1']] }, page);
  assert.match(
    html,
    /^<div class="table"><p class="caption" id="table-1">T<\/p><div class="scroll" role="region" tabindex="0" aria-labelledby="table-1"><table class="grid" aria-labelledby="table-1">/,
  );
  assert.match(html, /<td class="t" data-label="name">a&lt;b<\/td><td class="n" data-label="n">1<\/td>/);
  assert.equal(page.cut, false);
  assert.match(gridHtml({ caption: 'U', head, rows: [] }, page), /id="table-2"/);
});

test('a page shows at most MAX_PAGE_ROWS rows a table and stops at its size budget, saying so', () => {
  const page = new PageState();
  const rows = Array.from({ length: MAX_PAGE_ROWS + 5 }, (_, i) => [`r${i}`, String(i)]);
  const html = gridHtml({ caption: 'T', head, rows }, page);
  assert.equal(html.split('<tr>').length - 2, MAX_PAGE_ROWS);
  assert.match(html, /Showing the first 1,000 of 1,005 rows/);
  assert.equal(page.cut, true);
  const spent = new PageState();
  spent.tableChars = 0;
  assert.match(gridHtml({ caption: 'T', head, rows }, spent), /Showing none of 1,005 rows/);
});

test('a chart keeps at most 60 groups, 12 series and 500 points a line, and says what it left out', () => {
  const bars = capChart({
    id: 'b',
    title: 't',
    type: 'bar',
    xTitle: 'x',
    yTitle: 'y',
    labels: Array.from({ length: 100 }, (_, i) => String(i)),
    datasets: Array.from({ length: 20 }, (_, k) => ({ label: `s${k}`, data: Array(100).fill(k) })),
  });
  assert.equal(bars.labels?.length, 60);
  assert.equal(bars.datasets.length, 12);
  assert.equal(bars.datasets[0].data.length, 60);
  assert.equal(
    bars.caption,
    'Showing the first 12 of 20 series, the first 60 of 100 groups: the text report has every row.',
  );
  const line = capChart({
    id: 'l',
    title: 't',
    type: 'line',
    xTitle: 'x',
    yTitle: 'y',
    datasets: [{ label: 'l\u001b', data: Array.from({ length: 2000 }, (_, i) => ({ x: i, y: i })) }],
  });
  assert.equal(line.datasets[0].data.length, 500);
  assert.equal(line.datasets[0].label, 'l\\x1b');
  assert.match(line.caption ?? '', /an even sample of at most 500 of 2,000 points a line/);
  assert.equal(txt('\u001b<'), '\\x1b&lt;');
});
