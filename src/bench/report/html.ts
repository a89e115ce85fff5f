// The HTML report: one self-contained page (tables, verdicts, and charts drawn by Chart.js, whose file
// the build copies into dist and the page inlines, so nothing is fetched when the page is viewed). The seeds are
// given: each brings its section's charts (ours beside the thread's figure), tables and verdict; the
// page knows none of them. Pure apart from reading Chart.js.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Seed } from '../seeds/seed.js';
import { type ChartPair, type ChartSpec, sourceChart } from './charts.js';
import { mergeResults, type ResultsDocument } from './results.js';
import { cell, type Table, tables } from './views.js';

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

/** Every chart the page will draw, ours beside the thread's, seed by seed. */
export function chartPairs(doc: ResultsDocument, seeds: Seed[]): { seed: string; pairs: ChartPair[] }[] {
  return seeds.map((s) => ({ seed: s.id, pairs: s.charts(doc) }));
}

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string,
  );

function tableHtml(t: Table): string {
  const numeric = t.columns.map((c) => t.rows.some((r) => typeof c.get(r) === 'number'));
  const head = t.columns.map((c, i) => `<th${numeric[i] ? ' class="n"' : ''}>${esc(c.label)}</th>`).join('');
  const body = t.rows
    .map(
      (r) =>
        `<tr>${t.columns.map((c, i) => `<td${numeric[i] ? ' class="n"' : ''}>${esc(cell(c, r))}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<div class="scroll"><table data-scenario="${esc(t.scenario)}"><caption>${esc(t.title)}</caption><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

function chartHtml(spec: ChartSpec, source?: string): string {
  const kind = spec.seed ? 'seed' : 'ours';
  return `<figure class="${kind}"><div class="tag">${spec.seed ? "the seed's figure" : 'measured here'}</div><h4>${esc(spec.title)}</h4><div class="chart"><canvas id="${esc(spec.id)}" role="img" aria-label="${esc(spec.title)}"></canvas></div>${
    source || spec.caption ? `<figcaption>${esc(source ?? spec.caption ?? '')}</figcaption>` : ''
  }</figure>`;
}

function hostHtml(doc: ResultsDocument): string {
  const rows = Object.entries(doc.host.sysctls ?? {})
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`)
    .join('');
  return `<details><summary>host: Linux ${esc(doc.host.kernel)}${doc.host.cpus ? `, ${doc.host.cpus} CPUs` : ''}</summary><div class="scroll"><table class="host">${rows}</table></div></details>`;
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1280px;padding:16px 24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 4px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h4{font-size:13px;margin:0 0 6px}.meta{color:#57606a}.finding{color:#333;margin:4px 0 10px;max-width:980px}
ul.verdicts{list-style:none;padding:0}ul.verdicts li{padding:4px 8px;margin:3px 0;border-left:4px solid #8c959f;background:#f6f8fa;font-family:ui-monospace,monospace;font-size:13px}
ul.verdicts li.ok{border-color:#1a7f37}ul.verdicts li.bad{border-color:#cf222e}ul.verdicts li.skip{border-color:#9a6700;border-left-style:dashed}
.legend{font-size:12px;color:#57606a;margin:4px 0}.legend span{display:inline-block;margin-right:14px;padding-left:8px;border-left:4px solid}
.legend .ok{border-color:#1a7f37}.legend .bad{border-color:#cf222e}.legend .skip{border-color:#9a6700;border-left-style:dashed}
.scroll{overflow-x:auto;max-width:100%}figure{min-width:0}p,li,summary,code{overflow-wrap:anywhere}ul.verdicts li{overflow-wrap:anywhere}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px;margin:10px 0}
figure{margin:0;padding:10px 12px;border:1px solid #d0d7de;border-radius:6px;background:#fff;position:relative}
figure.seed{background:#fbfaf7;border-style:dashed}.tag{position:absolute;right:10px;top:8px;font-size:11px;color:#57606a}
.chart{position:relative;height:260px;min-width:0}canvas{max-width:100%}figcaption{font-size:12px;color:#57606a;margin-top:6px}
table{border-collapse:collapse;margin:10px 0;font-size:13px}caption{text-align:left;font-weight:600;padding:4px 0}
th,td{padding:3px 10px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}th{background:#f6f8fa}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}tbody tr:nth-child(even){background:#fafbfc}
.skipped{color:#9a6700}.absent{color:#57606a;font-style:italic}
@media (max-width:700px){.pair{grid-template-columns:minmax(0,1fr)}body{padding:8px 10px}}
`;

// Runs in the page: turns the specs into Chart.js charts, marks each canvas once it has been drawn
// (data-drawn) and the body with how many charts there are (data-charts).
const PAGE_SCRIPT = `
(function () {
  var specs = JSON.parse(document.getElementById('sockbuf-charts').textContent);
  var ours = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bc4c00', '#0598bc', '#bf3989'];
  var muted = ['#8c7a5b', '#b89968', '#6e7781', '#a0917a'];
  function compact(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return v / 1e9 + 'G';
    if (a >= 1e6) return v / 1e6 + 'M';
    if (a >= 1e3) return v / 1e3 + 'k';
    return Number(v.toPrecision(4)).toLocaleString('en-US');
  }
  // Logarithmic axes: ticks at 1, 2, 5 × powers of ten only, unrotated.
  function log(axis) {
    axis.type = 'logarithmic';
    axis.ticks = { maxRotation: 0, autoSkip: false, callback: function (v) {
      var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
      return Math.abs(m - 1) < 1e-6 || Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6 ? compact(v) : '';
    } };
    return axis;
  }
  var drawn = { id: 'sockbufDrawn', afterRender: function (chart) { chart.canvas.setAttribute('data-drawn', '1'); } };
  specs.forEach(function (s) {
    var colors = s.seed ? muted : ours;
    var datasets = s.datasets.map(function (d, i) {
      var c = colors[i % colors.length];
      return Object.assign({}, d, { backgroundColor: c, borderColor: c, borderWidth: s.type === 'line' ? 2 : 0, pointRadius: 3, spanGaps: true });
    });
    var x = { title: { display: true, text: s.xTitle } };
    if (s.xLog) x = log(x); else if (s.type === 'line') x.type = 'linear';
    var y = { title: { display: true, text: s.yTitle }, beginAtZero: !s.yLog, ticks: { callback: compact } };
    if (s.yLog) y = log(y);
    try {
      new Chart(document.getElementById(s.id), {
        type: s.type,
        data: { labels: s.labels, datasets: datasets },
        options: {
          animation: false, responsive: true, maintainAspectRatio: false,
          plugins: { legend: { display: datasets.length > 1 || !!s.seed, position: 'bottom' } },
          scales: { x: x, y: y }
        },
        plugins: [drawn]
      });
    } catch (e) {
      console.error('chart ' + s.id + ' failed: ' + e.message);
    }
  });
  document.body.setAttribute('data-charts', String(specs.length));
})();
`;

export interface RenderOptions {
  /** Shown under the title; defaults to the document's startedAt. */
  generatedAt?: string;
}

/** One self-contained HTML page for one or several sockbuf.v1 documents. */
export function htmlPage(
  input: ResultsDocument | ResultsDocument[],
  seeds: Seed[],
  opts: RenderOptions = {},
): string {
  const doc = Array.isArray(input) ? mergeResults(input) : input;
  const all = tables(doc, (scenario) => seeds.find((s) => s.tables.includes(scenario))?.id);
  const specs: ChartSpec[] = [];
  const lines = doc.verdicts?.length
    ? doc.verdicts
    : seeds.map((s) => s.verdict(doc)).filter((v) => v !== undefined);
  const sections = chartPairs(doc, seeds).map(({ seed, pairs }) => {
    const info = seeds.find((s) => s.id === seed);
    const mine = all.filter((t) => t.seed === seed);
    const skipped = (doc.skipped ?? []).filter(
      (s) => (s.seed ?? info?.entries.find((e) => e.id === s.scenario)?.seed) === seed,
    );
    const charts = pairs
      .map((p) => {
        const seedSpec = { ...sourceChart(p.seed), id: `seed-${p.seed.id}-${p.ours.id}` };
        specs.push(p.ours, seedSpec);
        return `<div class="pair">${chartHtml(p.ours)}${chartHtml(seedSpec, p.seed.source)}</div>`;
      })
      .join('\n');
    const verdict = lines.find((v) => v.seed === seed);
    const skips = skipped
      .map((s) => `<p class="skipped">Skipped ${esc(s.scenario)}: ${esc(s.reason)}.</p>`)
      .join('');
    const sum = info?.summary?.(doc);
    const summary = sum
      ? `<div class="scroll"><table><caption>${esc(sum.title)}</caption><thead><tr>${sum.head
          .map((h, i) => `<th${i ? ' class="n"' : ''}>${esc(h)}</th>`)
          .join('')}</tr></thead><tbody>${sum.rows
          .map((r) => `<tr>${r.map((v, i) => `<td${i ? ' class="n"' : ''}>${esc(v)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table></div>${sum.note ? `<p class="finding">${esc(sum.note)}</p>` : ''}`
      : '';
    const body = mine.length
      ? `${charts}\n${summary}${mine.map(tableHtml).join('\n')}${skips}`
      : `<p class="absent">Not measured in these results.</p>${skips}`;
    return `<section id="seed-${seed}" data-seed="${seed}"><h2>seed ${seed}: ${esc(info?.title ?? '')}</h2><p class="finding">${esc(info?.finding ?? '')}</p>${
      verdict
        ? `<ul class="verdicts"><li class="${verdict.ok === true ? 'ok' : verdict.ok === false ? 'bad' : 'skip'}">${esc(verdict.text)}</li></ul>`
        : ''
    }${body}</section>`;
  });
  const others = all.filter((t) => !t.seed);
  const when = opts.generatedAt ?? doc.startedAt ?? '';
  const command = Array.isArray(doc.command) ? doc.command.join(' ') : doc.command;
  const mark = (ok: boolean | undefined) =>
    ok === true ? ' class="ok"' : ok === false ? ' class="bad"' : ' class="skip"';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>sockbuf report — ${esc(command)}</title><style>${CSS}</style></head>
<body>
<h1>sockbuf report</h1>
<p class="meta">sockbuf ${esc(doc.version)} · <code>sockbuf ${esc(command)}</code>${when ? ` · ${esc(when)}` : ''}${
    doc.seconds !== undefined ? ` · ${doc.seconds.toFixed(0)} s` : ''
  } · schema ${esc(doc.schema)}</p>
${hostHtml(doc)}
<h2>Verdicts</h2>
<p class="legend"><span class="ok">reproduced: our figures meet the seed's criterion</span><span class="bad">not reproduced: measured, and they fall short (the suite exits 1)</span><span class="skip">skipped: not judged here, and why</span></p>
<ul class="verdicts">${lines.map((v) => `<li${mark(v.ok)}>${esc(v.text)}</li>`).join('\n') || '<li>No seed scenario in these results.</li>'}</ul>
${(doc.skipped ?? []).length ? `<p class="skipped">Skipped: ${(doc.skipped ?? []).map((s) => `${esc(s.scenario)} (${esc(s.reason)})`).join('; ')}</p>` : ''}
${sections.join('\n')}
${others.length ? `<section id="other"><h2>Other results</h2>${others.map(tableHtml).join('\n')}</section>` : ''}
<script type="application/json" id="sockbuf-charts">${JSON.stringify(specs).replace(/</g, '\\u003c')}</script>
<script>${chartLibrary()}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
