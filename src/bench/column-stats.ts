// Median, min and max of every numeric column over the repeats of one point, and the CV. Pure.
import type { Row } from './scenario.js';

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export interface ColumnStats {
  median: Record<string, number>;
  min: Record<string, number>;
  max: Record<string, number>;
}

/** For every column that is a finite number in at least one row: median, min and max over those rows. */
export function columnStats(rows: Row[]): ColumnStats {
  const cols = new Map<string, number[]>();
  for (const r of rows) {
    for (const [k, v] of Object.entries(r)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const list = cols.get(k) ?? [];
      list.push(v);
      cols.set(k, list);
    }
  }
  const out: ColumnStats = { median: {}, min: {}, max: {} };
  for (const [k, vs] of cols) {
    out.median[k] = median(vs);
    // loops, not spreads: any number of runs
    out.min[k] = vs.reduce((a, v) => Math.min(a, v), Number.POSITIVE_INFINITY);
    out.max[k] = vs.reduce((a, v) => Math.max(a, v), Number.NEGATIVE_INFINITY);
  }
  return out;
}

/** Sample standard deviation ÷ mean, in %, of the numeric values; undefined for fewer than 2. */
export function cvOf(values: unknown[]): number | undefined {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (xs.length < 2) return undefined;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
  return mean ? (100 * sd) / Math.abs(mean) : undefined;
}
