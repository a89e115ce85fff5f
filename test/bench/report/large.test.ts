// Report at any size (issue 37): one table of 130 000 rows, which a spread into Math.max (the text
// table's column widths) overflowed the stack on ("Maximum call stack size exceeded" above ~120 000).
// The text report and the HTML page both render it, every row in the text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderHtml, reportText } from '../../../src/bench/pages.js';
import { checkResults } from '../../../src/bench/report/results.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/results-hand.json', import.meta.url));
const ROWS = 130_000;

function largeDocument() {
  const doc = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  const base = doc.results.find((r: { scenario: string }) => r.scenario === 'drain');
  doc.results = Array.from({ length: ROWS }, (_, k) => ({ ...base, reader: `data#${k}` }));
  return checkResults(doc);
}

test(`report: one table of ${ROWS} rows renders as text (every row) and as HTML`, {
  timeout: 120_000,
}, () => {
  const doc = largeDocument();
  const text = reportText(doc);
  assert.match(text, new RegExp(`data#${ROWS - 1}\\b`), 'the last row is in the text');
  assert.ok(text.split('\n').length > ROWS, 'a line per row');
  const html = renderHtml(doc);
  assert.match(html, /<\/html>\s*$/);
});
