import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { renderHtml } from '../../../src/bench/pages.js';
import { chartPairs } from '../../../src/bench/report/html.js';
import { loadResults } from '../../../src/bench/report/results.js';
import { SEEDS } from '../../../src/bench/seeds/index.js';

// A real quick-suite run on this machine (results-quick.json) and a hand-written document with every
// scenario and the lab (results-hand.json).
const FIXTURE = 'test/fixtures/results-quick.json';
const HAND = 'test/fixtures/results-hand.json';
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve('test-artifacts');
// Runs in the page (a string: the test is compiled without DOM types): per canvas, how many pixels
// are not transparent.
const INKED = `Array.from(document.querySelectorAll('canvas')).map((c) => {
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
  return { id: c.id, n, w: c.width, h: c.height };
})`;

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

test('headless Chromium draws every chart with no console error, and the layout fits 420 px and 1280 px (screenshots in test-artifacts/)', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`,
  timeout: 60_000,
}, async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const page = join(ARTIFACTS, 'report.html');
  writeFileSync(page, renderHtml(loadResults([FIXTURE]), { generatedAt: 'fixture' }));
  const profile = mkdtempSync(join(tmpdir(), 'sockbuf-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1320, height: 900 },
  });
  try {
    const tab = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    const fetched: string[] = [];
    tab.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    tab.on('pageerror', (e) => errors.push(e.message));
    tab.on('request', (r) => {
      if (!r.url().startsWith('file:')) fetched.push(r.url());
    });
    await tab.goto(pathToFileURL(page).href);
    const charts = Number(await tab.getAttribute('body', 'data-charts', { timeout: 10_000 }));
    assert.ok(charts >= 10, `${charts} charts`);
    await tab.waitForFunction(`document.querySelectorAll('canvas[data-drawn]').length === ${charts}`, null, {
      timeout: 10_000,
    });
    // Every canvas has ink on it.
    const inked = (await tab.evaluate(INKED)) as { id: string; n: number; w: number; h: number }[];
    assert.equal(inked.length, charts);
    for (const c of inked)
      assert.ok(c.n > 2000 && c.w > 200 && c.h > 150, `canvas ${c.id} looks blank: ${JSON.stringify(c)}`);
    assert.deepEqual(errors, []);
    assert.deepEqual(fetched, []);
    await tab.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    // The layout at a phone's width and a laptop's: nothing wider than the window (wide tables scroll
    // inside their own box), and at 420 px the two columns of a pair collapse into one.
    for (const width of [420, 1280]) {
      await tab.setViewportSize({ width, height: 900 });
      const fit = (await tab.evaluate(
        `({ page: document.documentElement.scrollWidth, win: window.innerWidth, cols: getComputedStyle(document.querySelector('.pair')).gridTemplateColumns.split(' ').length })`,
      )) as { page: number; win: number; cols: number };
      assert.ok(fit.page <= fit.win, `at ${width} px the page is ${fit.page} px wide`);
      assert.equal(fit.cols, width < 700 ? 1 : 2, `columns of a pair at ${width} px`);
      await tab.screenshot({ path: join(ARTIFACTS, `report-${width}.png`), fullPage: true });
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
