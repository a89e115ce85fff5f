// The result tables: one per scenario and placement (and file, in a report of several), with the columns
// views.ts gives each scenario, and as aligned text for stdout. Shared by the HTML page, the text report
// and docs/seeds.md. Pure.
import { printable } from '../../policy/printable.js';
import { formatTable } from '../../policy/table.js';
import { isFindMax, labRttMs, type ResultRow, type ResultsDocument } from './results.js';
import { type Column, cell, genericColumns, VIEWS } from './views.js';

export interface Table {
  scenario: string;
  title: string;
  seed?: string;
  /** What the table leaves out, said under it. */
  note?: string;
  /** The results file the rows came from, in a report of several. */
  file?: string;
  columns: Column[];
  rows: ResultRow[];
}

/**
 * One table per scenario (and per placement), in the order the scenarios first appear. `seedOf` tags a
 * table with the seed whose section shows it (the report knows no seed itself).
 */
export function tables(
  doc: ResultsDocument,
  seedOf: (scenario: string) => string | undefined = () => undefined,
  file?: string,
): Table[] {
  const groups = new Map<string, ResultRow[]>();
  for (const r of doc.results) {
    const placement = typeof r.placement === 'string' && r.placement !== 'local' ? r.placement : '';
    const scenario = isFindMax(r) ? `${r.scenario}-max` : r.scenario;
    const key = `${scenario}\u0000${placement}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  return [...groups].map(([key, rows]) => {
    const [scenario, placement] = key.split('\u0000');
    const view = VIEWS[scenario];
    const rtt = labRttMs(doc, rows[0]);
    const where = placement ? ` (${placement}${rtt === undefined ? '' : `, rtt ${rtt} ms`})` : '';
    const all = view ? view.columns(rows) : genericColumns(rows);
    const columns = all.filter((col) => rows.some((r) => col.get(r) !== undefined));
    const left = (all as { left?: number }).left;
    return {
      scenario,
      title: (view?.title ?? scenario) + where,
      seed: seedOf(scenario),
      ...(file === undefined ? {} : { file }),
      ...(left ? { note: `${left} more columns not shown (the whole rows are in --json)` } : {}),
      columns,
      rows,
    };
  });
}

/** Whether a column holds numbers (right-aligned). */
export const isNumeric = (t: Table, col: Column) => t.rows.some((r) => typeof col.get(r) === 'number');

/** A table's heading: its seed, its title, and the file it came from in a report of several. */
export const heading = (t: Table) =>
  `${t.seed ? `[seed ${t.seed}] ` : ''}${t.title}${t.file === undefined ? '' : ` · from ${t.file}`}`;

/**
 * A table as aligned text for stdout: numbers right-aligned, text left-aligned; every string that came
 * from the results file with its control characters shown escaped.
 */
export function textTable(t: Table): string {
  const header = t.columns.map((col) => ({
    title: printable(col.label),
    align: isNumeric(t, col) ? ('right' as const) : ('left' as const),
  }));
  const body = t.rows.map((r) => t.columns.map((col) => printable(cell(col, r))));
  return `${printable(heading(t))}\n${formatTable(header, body)}${t.note ? `\n(${t.note})` : ''}`;
}
