// The pieces of the report page: tables (each titled above its keyboard-reachable scroll box, at most
// MAX_PAGE_ROWS rows and a page-wide size budget), chart figures (capped in labels, series and points),
// the host of a file, verdict lines. Every string from a results file is cut at MAX_TEXT characters,
// has its control characters shown escaped, and is HTML-escaped. Pure.
import { printable } from '../../policy/printable.js';
import {
  clip,
  count,
  MAX_CHART_LABELS,
  MAX_CHART_POINTS,
  MAX_CHART_SERIES,
  MAX_LIST,
  MAX_PAGE_ROWS,
  MAX_PAGE_TABLE_CHARS,
  MAX_TEXT,
  MAX_VERDICT,
} from './bounds.js';
import type { ChartSpec } from './charts.js';
import type { ResultsDocument, SeedVerdict } from './results.js';
import { isNumeric, type Table } from './tables.js';
import { cell } from './views.js';

export const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string,
  );

/** A string from a results file (or made from one) as page text: cut, control characters escaped. */
export const txt = (s: string, max = MAX_TEXT) => esc(printable(clip(s, max)));

/** What one page has used and cut: its element ids, its table budget, whether anything was left out. */
export class PageState {
  private ids = 0;
  tableChars = MAX_PAGE_TABLE_CHARS;
  cut = false;
  id(prefix: string): string {
    return `${prefix}-${++this.ids}`;
  }
}

export interface Grid {
  caption: string;
  head: { label: string; numeric: boolean }[];
  rows: string[][];
  /** How many rows the data had (more than `rows` when the caller already left some out). */
  total?: number;
  note?: string;
  attrs?: string;
}

/**
 * A table under its title. Wider than the window, it scrolls inside a box that takes keyboard focus;
 * below 700 px the style sheet shows each row as a card (each cell with its column's label).
 */
export function gridHtml(g: Grid, page: PageState): string {
  const id = page.id('table');
  const labels = g.head.map((h) => txt(h.label));
  const cls = (i: number) => (g.head[i]?.numeric ? 'n' : 't');
  const head = labels.map((label, i) => `<th scope="col" class="${cls(i)}">${label}</th>`).join('');
  const body: string[] = [];
  for (const r of g.rows) {
    if (body.length >= MAX_PAGE_ROWS || page.tableChars <= 0) break;
    // a long text cell wraps (a short one, such as batch+gro, stays whole)
    const td = (v: string, i: number) =>
      `<td class="${cls(i)}${v.length > 24 ? ' w' : ''}" data-label="${labels[i]}">${txt(v)}</td>`;
    const row = `<tr>${r.map(td).join('')}</tr>`;
    page.tableChars -= row.length;
    body.push(row);
  }
  const total = g.total ?? g.rows.length;
  const notes = g.note ? [txt(g.note)] : [];
  if (body.length < total) {
    page.cut = true;
    notes.push(
      `Showing ${body.length ? `the first ${count(body.length)}` : 'none'} of ${count(total)} rows: a page ` +
        `carries at most ${count(MAX_PAGE_ROWS)} rows a table and ${MAX_PAGE_TABLE_CHARS >> 20} MB of tables. ` +
        '<code>sockbuf report FILE</code> prints every row as text, <code>--json</code> the whole document.',
    );
  }
  return `<div class="table"><p class="caption" id="${id}">${txt(g.caption, 400)}</p><div class="scroll" role="region" tabindex="0" aria-labelledby="${id}"><table class="grid" aria-labelledby="${id}"${g.attrs ?? ''}><thead><tr>${head}</tr></thead><tbody>\n${body.join('\n')}\n</tbody></table></div>${notes.map((n) => `<p class="cut">${n}</p>`).join('')}</div>`;
}

/** A result table (views.ts) on the page. */
export function tableHtml(t: Table, page: PageState): string {
  const file = t.file === undefined ? '' : ` · from ${t.file}`;
  return gridHtml(
    {
      caption: `${t.title}${file}`,
      head: t.columns.map((c) => ({ label: c.label, numeric: isNumeric(t, c) })),
      // cells are made only for the rows the page will show
      rows: t.rows.slice(0, MAX_PAGE_ROWS).map((r) => t.columns.map((c) => cell(c, r))),
      total: t.rows.length,
      note: t.note,
      attrs: ` data-scenario="${esc(t.scenario)}"`,
    },
    page,
  );
}

/** Every `k`-th point, so that a line keeps its shape in at most `max` points. */
function sample<T>(points: T[], max: number): T[] {
  if (points.length <= max) return points;
  const k = Math.ceil(points.length / max);
  return points.filter((_, i) => i % k === 0);
}

/** A chart spec a browser draws quickly: at most MAX_CHART_SERIES series, MAX_CHART_LABELS groups, MAX_CHART_POINTS points a line; labels cut. */
export function capChart(spec: ChartSpec): ChartSpec {
  const left: string[] = [];
  let datasets = spec.datasets;
  let labels = spec.labels;
  if (datasets.length > MAX_CHART_SERIES) {
    left.push(`the first ${MAX_CHART_SERIES} of ${count(datasets.length)} series`);
    datasets = datasets.slice(0, MAX_CHART_SERIES);
  }
  if (labels && labels.length > MAX_CHART_LABELS) {
    left.push(`the first ${MAX_CHART_LABELS} of ${count(labels.length)} groups`);
    labels = labels.slice(0, MAX_CHART_LABELS);
    datasets = datasets.map((d) => ({
      ...d,
      data: (d.data as (number | null)[]).slice(0, MAX_CHART_LABELS),
    }));
  }
  const longest = datasets.reduce((a, d) => Math.max(a, d.data.length), 0);
  if (!labels && longest > MAX_CHART_POINTS) {
    left.push(`an even sample of at most ${MAX_CHART_POINTS} of ${count(longest)} points a line`);
    datasets = datasets.map((d) => ({
      ...d,
      data: sample(d.data as { x: number; y: number }[], MAX_CHART_POINTS),
    }));
  }
  const said = left.length ? `Showing ${left.join(', ')}: the text report has every row.` : '';
  return {
    ...spec,
    title: printable(clip(spec.title, 400)),
    ...(labels ? { labels: labels.map((l) => printable(clip(l, 40))) } : {}),
    datasets: datasets.map((d) => ({ ...d, label: printable(clip(d.label, 60)) })),
    ...(spec.caption || said ? { caption: [spec.caption, said].filter(Boolean).join(' ') } : {}),
  };
}

/** A chart beside its tag ("measured here", "the seed's figure"), under a heading of `level`. */
export function chartHtml(spec: ChartSpec, level: number, source?: string): string {
  const kind = spec.seed ? 'seed' : 'ours';
  const tag = spec.seed ? "the seed's figure" : 'measured here';
  const caption = source ?? spec.caption;
  return `<figure class="${kind}"><div class="head"><h${level}>${txt(spec.title, 400)}</h${level}><span class="tag">${tag}</span></div><div class="chart"><canvas id="${esc(spec.id)}" role="img" aria-label="${txt(spec.title, 400)}"></canvas></div>${
    caption ? `<figcaption>${txt(caption, 1000)}</figcaption>` : ''
  }</figure>`;
}

/** A file's host: kernel, CPUs, and its buffer sysctls (at most MAX_LIST). */
export function hostHtml(doc: ResultsDocument, file?: string): string {
  const all = Object.entries(doc.host.sysctls ?? {});
  const rows = all
    .slice(0, MAX_LIST)
    .map(([k, v]) => `<tr><th scope="row">${txt(k)}</th><td>${txt(String(v))}</td></tr>`)
    .join('');
  const more =
    all.length > MAX_LIST ? `<p class="cut">and ${count(all.length - MAX_LIST)} more sysctls</p>` : '';
  const cpus = doc.host.cpus ? `, ${txt(String(doc.host.cpus))} CPUs` : '';
  const of = file === undefined ? '' : ` of ${txt(file)}`;
  return `<details><summary>host${of}: Linux ${txt(String(doc.host.kernel))}${cpus}</summary><table class="host">${rows}</table>${more}</details>`;
}

/** What ran and when: version, command, start, duration, schema. */
export function metaHtml(doc: ResultsDocument, when?: string): string {
  const command = Array.isArray(doc.command) ? doc.command.join(' ') : String(doc.command);
  const at = when ?? doc.startedAt;
  return `sockbuf ${txt(String(doc.version))} · <code>sockbuf ${txt(command, 400)}</code>${at ? ` · ${txt(at)}` : ''}${
    typeof doc.seconds === 'number' ? ` · ${doc.seconds.toFixed(0)} s` : ''
  } · schema ${txt(String(doc.schema))}`;
}

const mark = (ok: boolean | undefined) => (ok === true ? 'ok' : ok === false ? 'bad' : 'skip');

/** A verdict line, naming its file in a report of several. */
export function verdictHtml(v: SeedVerdict, file?: string): string {
  const from = file === undefined ? '' : `<span class="file">${txt(file)}</span> · `;
  return `<li class="${mark(v.ok)}">${from}${txt(v.text, MAX_VERDICT)}</li>`;
}
