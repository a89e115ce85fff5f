// The report page in a real browser (Debian's Chromium through playwright-core): every chart drawn, and
// at a phone's width (420 px) and a laptop's (1280 px) no chart tag over its title, no two axis labels
// over each other, no table or table title cut, and no violation of axe-core's rules (among them
// scrollable-region-focusable: a box that scrolls takes keyboard focus). Screenshots of the one-file page
// in test-artifacts/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { renderHtml } from '../../../src/bench/pages.js';
import { loadResults, type ResultsDocument } from '../../../src/bench/report/results.js';
import { mergeResults } from '../../../src/bench/report/sources.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve('test-artifacts');
const WIDTHS = [420, 1280];
const skip = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// The checks run in the page: strings, since the tests are compiled without DOM types.

// Per canvas, how many pixels are not transparent.
const INKED = `Array.from(document.querySelectorAll('canvas')).map((c) => {
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
  return { id: c.id, n, w: c.width, h: c.height };
})`;

// Boxes that overlap: in each chart figure, its heading, its tag, its canvas and its caption.
const FIGURE_OVERLAPS = `(() => {
  const out = [];
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const f of document.querySelectorAll('figure')) {
    // text by the box of its characters (a heading's element box is as wide as its line)
    const box = (e) => {
      if (e.tagName === 'CANVAS') return e.getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(e);
      return range.getBoundingClientRect();
    };
    const parts = [...f.querySelectorAll('h3, h4, .tag, canvas, figcaption')].map((e) => [e, box(e)]);
    for (let i = 0; i < parts.length; i++)
      for (let j = i + 1; j < parts.length; j++)
        if (meet(parts[i][1], parts[j][1]))
          out.push(f.querySelector('canvas').id + ': ' + parts[i][0].className + parts[i][0].tagName + ' over ' + parts[j][0].className + parts[j][0].tagName);
  }
  return out;
})()`;

// Axis labels that overlap, per chart and axis (unrotated labels: rotated ones Chart.js spaces itself).
const TICK_COLLISIONS = `(() => {
  const out = [];
  let labels = 0;
  for (const canvas of document.querySelectorAll('canvas')) {
    const chart = Chart.getChart(canvas);
    for (const scale of Object.values(chart.scales)) {
      const horizontal = scale.isHorizontal();
      const boxes = scale.getLabelItems()
        .filter((i) => i.label !== '' && i.options.rotation === 0)
        .map((i) => {
          chart.ctx.font = i.font.string;
          const w = chart.ctx.measureText(String(i.label)).width;
          const [x, y] = i.options.translation;
          const align = i.options.textAlign;
          const from = horizontal ? (align === 'left' ? x : align === 'right' ? x - w : x - w / 2) : y - i.font.lineHeight / 2;
          return { label: String(i.label), from, to: from + (horizontal ? w : i.font.lineHeight) };
        })
        .sort((a, b) => a.from - b.from);
      labels += boxes.length;
      for (let k = 1; k < boxes.length; k++)
        if (boxes[k].from < boxes[k - 1].to)
          out.push(canvas.id + ' ' + scale.id + ': ' + boxes[k - 1].label + ' / ' + boxes[k].label);
    }
  }
  return { labels, out };
})()`;

// Tables wider than their box, and table titles not wholly in view (cut by the window or by a box
// that scrolls), after opening every <details>.
const CUT_TABLES = `(() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const clipper = (e) => {
    for (let p = e.parentElement; p; p = p.parentElement)
      if (getComputedStyle(p).overflowX !== 'visible') return p;
    return undefined;
  };
  const tables = [], titles = [];
  for (const t of document.querySelectorAll('table')) {
    const box = clipper(t);
    const title = t.caption || document.getElementById(t.getAttribute('aria-labelledby') || '');
    const name = (title && title.textContent) || t.className;
    if (t.dataset.scenario === 'mystery') continue;
    if (box && box.scrollWidth > box.clientWidth + 1) tables.push(name + ': ' + box.scrollWidth + ' px in ' + box.clientWidth);
    if (!title) continue;
    const r = title.getBoundingClientRect();
    const c = clipper(title);
    const limit = c ? c.getBoundingClientRect() : { left: 0, right: window.innerWidth };
    if (r.left < Math.max(0, limit.left) - 1 || r.right > Math.min(window.innerWidth, limit.right) + 1 || title.scrollWidth > title.clientWidth + 1)
      titles.push(name);
  }
  return { count: document.querySelectorAll('table').length, tables, titles };
})()`;

// Boxes that scroll, and whether each takes keyboard focus.
const SCROLLERS = `[...document.querySelectorAll('*')]
  .filter((e) => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth)
  .map((e) => ({ id: e.getAttribute('aria-labelledby') || e.tagName, focusable: e.tabIndex >= 0 }))`;

// Per chart, the share of its canvas that the plot area takes (legend, axes and labels take the rest).
const PLOT_SHARES = `[...document.querySelectorAll('canvas')].map((c) => {
  const ch = Chart.getChart(c);
  const a = ch.chartArea;
  return { id: c.id, w: (a.right - a.left) / ch.width, h: (a.bottom - a.top) / ch.height };
})`;

let context: BrowserContext | undefined;
let profile = '';
before(async () => {
  if (skip) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'sockbuf-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
});
after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** `html` opened in a tab, every chart drawn, no console error and nothing fetched. */
async function open(name: string, html: string): Promise<Page> {
  const file = join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, html);
  const tab = await (context as BrowserContext).newPage();
  const errors: string[] = [];
  const fetched: string[] = [];
  tab.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('request', (r) => {
    if (!r.url().startsWith('file:')) fetched.push(r.url());
  });
  await tab.goto(pathToFileURL(file).href);
  const charts = Number(await tab.getAttribute('body', 'data-charts', { timeout: 10_000 }));
  await tab.waitForFunction(`document.querySelectorAll('canvas[data-drawn]').length === ${charts}`, null, {
    timeout: 10_000,
  });
  const inked = (await tab.evaluate(INKED)) as { id: string; n: number; w: number; h: number }[];
  assert.equal(inked.length, charts);
  for (const c of inked)
    assert.ok(c.n > 2000 && c.w > 200 && c.h > 150, `canvas ${c.id} looks blank: ${JSON.stringify(c)}`);
  assert.deepEqual(errors, []);
  assert.deepEqual(fetched, []);
  return tab;
}

/** The layout checks and axe-core at each width; screenshots of each. */
async function layout(tab: Page, name: string): Promise<void> {
  await tab.addScriptTag({ content: AXE });
  for (const width of WIDTHS) {
    await tab.setViewportSize({ width, height: 900 });
    // let Chart.js redraw at the new width
    await tab.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const at = `${name} at ${width} px`;
    const page = (await tab.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(page <= width, `${at}: the page is ${page} px wide`);
    const cols = await tab.evaluate(
      `getComputedStyle(document.querySelector('.pair')).gridTemplateColumns.split(' ').length`,
    );
    assert.equal(cols, width < 700 ? 1 : 2, `${at}: columns of a chart pair`);
    assert.deepEqual(await tab.evaluate(FIGURE_OVERLAPS), [], `${at}: overlapping boxes in a chart figure`);
    const ticks = (await tab.evaluate(TICK_COLLISIONS)) as { labels: number; out: string[] };
    assert.ok(ticks.labels > 100, `${at}: ${ticks.labels} axis labels measured`);
    assert.deepEqual(ticks.out, [], `${at}: axis labels over each other`);
    const cut = (await tab.evaluate(CUT_TABLES)) as { count: number; tables: string[]; titles: string[] };
    assert.ok(cut.count >= 9, `${at}: ${cut.count} tables`);
    assert.deepEqual(cut.tables, [], `${at}: tables cut (they scroll)`);
    assert.deepEqual(cut.titles, [], `${at}: table titles cut`);
    for (const s of (await tab.evaluate(SCROLLERS)) as { id: string; focusable: boolean }[])
      assert.ok(s.focusable, `${at}: ${s.id} scrolls but takes no keyboard focus`);
    const axe = (await tab.evaluate(
      `axe.run(document).then((r) => ({
        violations: r.violations.map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')),
        ran: [...r.passes, ...r.inapplicable, ...r.incomplete, ...r.violations].map((v) => v.id),
      }))`,
    )) as { violations: string[]; ran: string[] };
    assert.ok(axe.ran.includes('scrollable-region-focusable'), `${at}: axe ran scrollable-region-focusable`);
    assert.deepEqual(axe.violations, [], `${at}: axe-core violations`);
    if (name === 'report')
      await tab.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
}

test('one results file: every chart drawn, nothing overlapping, cut or out of keyboard reach at 420 and 1280 px', {
  skip,
  timeout: 90_000,
}, async () => {
  const tab = await open(
    'report',
    renderHtml(loadResults(['test/fixtures/results-quick.json']), { generatedAt: 'fixture' }),
  );
  await layout(tab, 'report');
  await tab.close();
});

test('two files merged, one with a table of 40 columns: the same at 420 and 1280 px, and the wide table scrolls by keyboard', {
  skip,
  timeout: 90_000,
}, async () => {
  const [quick] = loadResults(['test/fixtures/results-quick.json']);
  const row = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`figure${i}Bytes`, 1e9 + i]));
  const wide: ResultsDocument = { ...quick, results: [{ scenario: 'mystery', ...row }], skipped: [] };
  const tab = await open(
    'report-merged',
    renderHtml(mergeResults([quick, wide], ['quick.json', 'wide.json'])),
  );
  await layout(tab, 'report-merged');
  // at 1280 px the 40 columns are wider than the page: the box scrolls, and takes keyboard focus
  await tab.setViewportSize({ width: 1280, height: 900 });
  const scrollers = (await tab.evaluate(SCROLLERS)) as { id: string; focusable: boolean }[];
  assert.equal(scrollers.length, 1, JSON.stringify(scrollers));
  await tab.focus(`[aria-labelledby="${scrollers[0].id}"]`);
  await tab.keyboard.press('ArrowRight');
  // (the scroll may be animated)
  const box = `document.querySelector('[aria-labelledby="${scrollers[0].id}"]')`;
  await tab.waitForFunction(`${box}.scrollLeft > 0`, null, { timeout: 5000 });
  await tab.close();
});

// issue 37: with long reader names the bar charts squeezed into a corner, their labels piled up
test('long reader names: labels cut short (whole in the tooltip), the plot keeps its room, at 420 and 1280 px', {
  skip,
  timeout: 90_000,
}, async () => {
  const [quick] = loadResults(['test/fixtures/results-quick.json']);
  const long = (v: unknown, i: number) => `${String(v)}-a-reader-name-that-goes-on-and-on-without-end-${i}`;
  const doc: ResultsDocument = {
    ...quick,
    results: quick.results.map((r, i) =>
      typeof r.reader === 'string' ? { ...r, reader: long(r.reader, i % 7) } : r,
    ),
  };
  const tab = await open('report-long-names', renderHtml(doc, { generatedAt: 'fixture' }));
  for (const width of WIDTHS) {
    await tab.setViewportSize({ width, height: 900 });
    await tab.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const shares = (await tab.evaluate(PLOT_SHARES)) as { id: string; w: number; h: number }[];
    const squeezed = shares.filter((s) => s.w < 0.6 || s.h < 0.4);
    assert.deepEqual(squeezed, [], `at ${width} px: plots squeezed by their labels`);
    const ticks = (await tab.evaluate(TICK_COLLISIONS)) as { labels: number; out: string[] };
    assert.deepEqual(ticks.out, [], `at ${width} px: axis labels over each other`);
  }
  await tab.screenshot({ path: join(ARTIFACTS, 'report-long-names.png'), fullPage: true });
  await tab.close();
});
