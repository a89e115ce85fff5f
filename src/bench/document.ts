// The results document every bench (and doctor) run produces, as docs/results-schema.json describes it
// (types and checker in report/results.ts): stable top-level keys, the way iperf3 -J has
// start/intervals/end, so that `sockbuf report` and other tools can rely on them.
import { hostInfo } from '../observe/proc.js';
import { VERSION } from '../sys/package.js';
import { type ResultRow, type ResultsDocument, SCHEMA } from './report/results.js';
import type { PointResult } from './runner.js';
import type { Cell } from './scenario.js';

export { VERSION };

export function resultsDocument(
  command: string,
  params: Record<string, unknown>,
  results: ResultRow[],
  extra: { startedAt?: string; seconds?: number } = {},
): ResultsDocument {
  return { schema: SCHEMA, version: VERSION, command, params, host: hostInfo(), ...extra, results };
}

/**
 * A point's results as one row of the document: the scenario, the placement, the number of runs,
 * the point's labels, then each numeric column as { median, min, max, values } (values: every run),
 * and each other column as its value (or the list of values when runs disagree).
 */
export function benchRow(scenario: string, placement: string, r: PointResult): ResultRow {
  const row: ResultRow = { scenario, placement, repeats: r.runs.length, ...r.labels };
  const keys: string[] = [];
  for (const run of r.runs) for (const k of Object.keys(run)) if (!keys.includes(k)) keys.push(k);
  for (const k of keys) {
    if (k in r.median) {
      const values = r.runs.map((run) => run[k]).filter((v): v is number => typeof v === 'number');
      row[k] = { median: r.median[k], min: r.min[k], max: r.max[k], values };
    } else {
      const values = r.runs.map((run) => run[k] ?? null) as Cell[];
      row[k] = values.every((v) => v === values[0]) ? values[0] : values;
    }
  }
  return row;
}
