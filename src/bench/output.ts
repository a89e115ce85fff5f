// Output of a bench run: the table for people and the JSON document. Pure: they return text.

import { printableJson } from '../policy/printable.js';
import { formatTable } from '../policy/table.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { cvOf } from './column-stats.js';
import type { ResultsDocument } from './report/results.js';
import type { PointResult } from './runner.js';
import type { Column } from './scenario.js';

function plain(v: number): string {
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(4)));
}

function perSecond(v: number, unit: string): string {
  const steps: [number, string][] = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [n, p] of steps) if (Math.abs(v) >= n) return `${plain(v / n)}${p} ${unit}/s`;
  return `${plain(v)} ${unit}/s`;
}

/** The format a JSON key names: the unit is the end of the key (rttUs, bytesPerSecond). */
export function guessFormat(key: string): (v: number) => string {
  if (/bytesPerSecond$/i.test(key)) return (v) => formatBitRate(v * 8);
  if (/bitsPerSecond$/i.test(key)) return (v) => formatBitRate(v);
  if (/(datagrams|packets|messages)PerSecond$/i.test(key)) return (v) => perSecond(v, 'pkt');
  if (/PerSecond$/.test(key)) return (v) => perSecond(v, '');
  if (/(^b|B)ytes$/.test(key)) return (v) => formatSize(v);
  if (/(^s|S)econds$/.test(key)) return (v) => formatDuration(v);
  if (/Ms$/.test(key)) return (v) => formatDuration(v / 1e3);
  if (/Us$/.test(key)) return (v) => formatDuration(v / 1e6);
  if (/(Pct|Percent)$/.test(key)) return (v) => `${plain(v)} %`;
  return plain;
}

/** The numeric columns to show: the scenario's list, else every column any point has a median of. */
export function tableColumns(results: PointResult[], columns?: Column[]): Column[] {
  if (columns?.length) return columns;
  const keys: string[] = [];
  for (const r of results) for (const k of Object.keys(r.median)) if (!keys.includes(k)) keys.push(k);
  return keys.map((key) => ({ key }));
}

/**
 * One line per point: its labels, then the median of each numeric column; with more than one run a
 * `±N%` after it gives the spread ((max − min) / 2 / median). The raw runs are in the JSON.
 */
export function renderTable(results: PointResult[], columns?: Column[]): string {
  const labelKeys: string[] = [];
  for (const r of results)
    for (const k of Object.keys(r.labels)) if (!labelKeys.includes(k)) labelKeys.push(k);
  const cols = tableColumns(results, columns);
  const rows = results.map((r) => [
    ...labelKeys.map((k) => r.labels[k] ?? ''),
    ...cols.map((c) => {
      const m = r.median[c.key];
      if (m === undefined) return '–';
      const text = (c.format ?? guessFormat(c.key))(m);
      if (r.runs.length < 2 || m === 0) return text;
      const spread = Math.round(((r.max[c.key] - r.min[c.key]) / 2 / Math.abs(m)) * 100);
      return `${text} ±${spread}%`;
    }),
  ]);
  const runs = results.reduce((a, r) => Math.max(a, r.runs.length), 0);
  // with repeats, the coefficient of variation of the first figure (seed 000's tables give one)
  const first = cols[0]?.key;
  if (runs > 1 && first !== undefined)
    results.forEach((r, i) => {
      const cv = cvOf(r.runs.map((run) => run[first]));
      rows[i].push(cv === undefined ? '–' : `${cv.toFixed(1)} %`);
    });
  const header = [
    ...labelKeys.map((k) => ({ title: k, align: 'left' as const })),
    ...cols.map((c) => ({ title: c.title ?? c.key, align: 'right' as const })),
    ...(runs > 1 && first !== undefined ? [{ title: 'CV', align: 'right' as const }] : []),
  ];
  const note =
    runs > 1 ? `\nmedians of ${runs} runs (±: half the min–max range); every run is in --json` : '';
  return `${formatTable(header, rows)}${note}`;
}

/** The document as one JSON text: a single parseable document, every control character escaped. */
export function renderJson(doc: ResultsDocument): string {
  return `${printableJson(JSON.stringify(doc, null, 2))}\n`;
}
