// The HTML report: one self-contained page (tables, verdicts, and charts drawn by Chart.js, whose file
// the build copies into dist and the page inlines, so nothing is fetched when the page is viewed). The seeds are
// given: each brings its section's charts (ours beside the thread's figure), tables, verdict, thread
// and link; the page knows none of them. Several files are shown file by file within each seed's
// section, each judged on its own rows. Pure apart from reading Chart.js.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { judgeSeeds, type Seed, seedMeaning } from '../seeds/seed.js';
import { count, MAX_FILES, MAX_LIST } from './bounds.js';
import { type ChartPair, type ChartSpec, sourceChart } from './charts.js';
import {
  capChart,
  chartHtml,
  esc,
  gridHtml,
  hostHtml,
  metaHtml,
  PageState,
  tableHtml,
  txt,
  verdictHtml,
} from './html-parts.js';
import { CSS, PAGE_SCRIPT } from './page-assets.js';
import type { ResultsDocument, SeedVerdict } from './results.js';
import { mergeResults, type Source, sources } from './sources.js';
import { type Table, tables } from './tables.js';

let chartJs: string | undefined;
/**
 * Chart.js's UMD bundle: the copy the build put beside this module (scripts/build-assets.mjs; chart.js
 * is a devDependency, so an installed sockbuf has no chart.js package), or the devDependency's own file
 * when running from source.
 */
export function chartLibrary(): string {
  if (chartJs === undefined) {
    const built = new URL('./chart.umd.min.js', import.meta.url);
    const file = existsSync(built)
      ? built
      : join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js');
    chartJs = readFileSync(file, 'utf8').replace(/<\/script/gi, '<\\/script');
  }
  return chartJs;
}

/** Every chart the page will draw, ours beside the thread's, seed by seed. @internal (exported for its test) */
export function chartPairs(doc: ResultsDocument, seeds: Seed[]): { seed: string; pairs: ChartPair[] }[] {
  return seeds.map((s) => ({ seed: s.id, pairs: s.charts(doc) }));
}

export interface RenderOptions {
  /** Shown under the title; defaults to the document's startedAt. */
  generatedAt?: string;
}

/** One file of the page, with what is computed once for it. */
interface Part extends Source {
  /** Prefix of its chart ids (several files draw the same charts). */
  prefix: string;
  tables: Table[];
  verdicts: SeedVerdict[];
}

const link = (s: Seed) =>
  s.url && /^https:\/\//.test(s.url) ? `<a href="${esc(s.url)}">${esc(s.thread)}</a>` : esc(s.thread);

/** What a seed is, and the five threads, each linked. */
function seedsHtml(seeds: Seed[]): string {
  const items = seeds.map(
    (s) => `<li><a href="#seed-${esc(s.id)}">seed ${esc(s.id)}</a> ${esc(s.title)}: ${link(s)}</li>`,
  );
  return `<h2 id="seeds">The seeds</h2><p>${esc(seedMeaning(seeds.length))}</p><ul class="seeds">${items.join('')}</ul>`;
}

/** The verdict lines of every file; a file without rows says that nothing was judged. */
function verdictsHtml(parts: Part[]): string {
  const lines = parts.flatMap((p) => {
    const from = p.file === undefined ? '' : `<span class="file">${txt(p.file)}</span> · `;
    const none = !p.doc.results.length
      ? [`<li class="none">${from}no result rows: nothing was measured, so no seed is judged.</li>`]
      : !p.verdicts.length
        ? [`<li class="none">${from}no seed scenario in these results.</li>`]
        : [];
    return [...none, ...p.verdicts.map((v) => verdictHtml(v, p.file))];
  });
  return `<h2>Verdicts</h2>
<p class="legend"><span class="ok">reproduced: our figures meet the seed's criterion</span><span class="bad">not reproduced: measured, and they fall short (the suite exits 1)</span><span class="skip">skipped: not judged here, and why</span><span class="bad">too noisy: the ratios' interval is wider than ±20 %, no verdict: rerun on a quieter host (the suite exits 1)</span></p>
<ul class="verdicts">${lines.join('\n')}</ul>`;
}

/** Every skipped entry (at most MAX_LIST a file), naming its file in a report of several. */
function skippedHtml(parts: Part[]): string {
  const items = parts.flatMap((p) => {
    const from = p.file === undefined ? '' : `${txt(p.file)}: `;
    const all = p.doc.skipped ?? [];
    const more = all.length > MAX_LIST ? [`${from}${count(all.length - MAX_LIST)} more`] : [];
    return [...all.slice(0, MAX_LIST).map((s) => `${from}${txt(s.scenario)} (${txt(s.reason)})`), ...more];
  });
  return items.length ? `<p class="skipped">Skipped: ${items.join('; ')}</p>` : '';
}

/** One file's part of a seed's section: its verdict, charts, summary table, result tables and skips. */
function seedPart(seed: Seed, p: Part, multi: boolean, page: PageState, specs: ChartSpec[]): string {
  const mine = p.tables.filter((t) => t.seed === seed.id);
  const skipped = (p.doc.skipped ?? []).filter(
    (s) => s.seed === seed.id || (s.seed === undefined && seed.entries.some((e) => e.id === s.scenario)),
  );
  const verdict = p.verdicts.find((v) => v.seed === seed.id);
  const where = p.file === undefined ? 'these results' : txt(p.file);
  const level = multi ? 4 : 3;
  const out: string[] = [];
  if (multi) out.push(`<h3>from ${txt(p.file ?? '')}</h3>`);
  if (verdict) out.push(`<ul class="verdicts">${verdictHtml(verdict, p.file)}</ul>`);
  if (mine.length) {
    for (const pair of seed.charts(p.doc)) {
      const ours = capChart({ ...pair.ours, id: p.prefix + pair.ours.id });
      const theirs = { ...sourceChart(pair.seed), id: `${p.prefix}seed-${pair.seed.id}-${pair.ours.id}` };
      specs.push(ours, theirs);
      out.push(
        `<div class="pair">${chartHtml(ours, level)}${chartHtml(theirs, level, pair.seed.source)}</div>`,
      );
    }
    const sum = seed.summary?.(p.doc);
    if (sum) {
      const head = sum.head.map((label, i) => ({ label, numeric: i > 0 }));
      const file = p.file === undefined ? '' : ` · from ${p.file}`;
      out.push(gridHtml({ caption: sum.title + file, head, rows: sum.rows, note: sum.note }, page));
    }
    for (const t of mine) out.push(tableHtml(t, page));
  } else out.push(`<p class="absent">Not measured in ${where}.</p>`);
  out.push(
    ...skipped.map((s) => `<p class="skipped">Skipped ${txt(s.scenario)}: ${txt(s.reason, 1000)}.</p>`),
  );
  return out.join('\n');
}

/** One self-contained HTML page for one or several sockbuf.v1 documents. */
export function htmlPage(
  input: ResultsDocument | ResultsDocument[],
  seeds: Seed[],
  opts: RenderOptions = {},
): string {
  const doc = Array.isArray(input) ? mergeResults(input) : input;
  const seedOf = (scenario: string) => seeds.find((s) => s.tables.includes(scenario))?.id;
  const every = sources(doc);
  const all = every.slice(0, MAX_FILES);
  const multi = all.length > 1;
  const parts: Part[] = all.map((s, i) => ({
    ...s,
    prefix: multi ? `f${i + 1}-` : '',
    tables: tables(s.doc, seedOf, s.file),
    verdicts: judgeSeeds(s.doc, seeds),
  }));
  const page = new PageState();
  const specs: ChartSpec[] = [];
  const sections = seeds.map((seed) => {
    const body = parts.map((p) => seedPart(seed, p, multi, page, specs)).join('\n');
    return `<section id="seed-${esc(seed.id)}" data-seed="${esc(seed.id)}"><h2>seed ${esc(seed.id)}: ${esc(seed.title)}</h2><p class="finding">${esc(seed.finding)}</p><p class="thread">From ${link(seed)}.</p>${body}</section>`;
  });
  const others = parts.flatMap((p) => p.tables.filter((t) => !t.seed)).map((t) => tableHtml(t, page));
  const files = multi
    ? `<p class="meta">${all.length} results files, each judged on its own rows:</p><ul class="files">${parts
        .map(
          (p) =>
            `<li><span class="file">${txt(p.file ?? '')}</span>: ${metaHtml(p.doc)}${hostHtml(p.doc, p.file)}</li>`,
        )
        .join('')}</ul>`
    : `<p class="meta">${metaHtml(doc, opts.generatedAt)}</p>${hostHtml(doc)}`;
  const unshown =
    every.length > all.length
      ? ` Only the first ${MAX_FILES} of ${count(every.length)} files are shown.`
      : '';
  const notice =
    page.cut || unshown
      ? `<p class="notice">These results are too large for one page: some tables show only their first rows (said under each).${unshown} <code>sockbuf report FILE</code> prints every row as text.</p>`
      : '';
  const command = Array.isArray(doc.command) ? doc.command.join(' ') : String(doc.command);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>sockbuf report — ${txt(command)}</title><style>${CSS}</style></head>
<body>
<header><h1>sockbuf report</h1>
${files}</header>
<main>
${notice}
${seedsHtml(seeds)}
${verdictsHtml(parts)}
${skippedHtml(parts)}
${sections.join('\n')}
${others.length ? `<section id="other"><h2>Other results</h2>${others.join('\n')}</section>` : ''}
</main>
<script type="application/json" id="sockbuf-charts">${JSON.stringify(specs).replace(/</g, '\\u003c')}</script>
<script>${chartLibrary()}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
