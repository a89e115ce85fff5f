// What a page draws: chart specs (plain JSON that the page's script hands to Chart.js), a source's own
// figure beside the chart that measures it again, and the helpers that build specs from result rows.
// Pure.
import { distinct, param, type ResultRow } from './results.js';

/** What the page's script turns into a Chart.js chart. Plain JSON. */
export interface ChartSpec {
  id: string;
  title: string;
  type: 'bar' | 'line';
  xTitle: string;
  yTitle: string;
  xLog?: boolean;
  yLog?: boolean;
  labels?: string[];
  datasets: { label: string; data: (number | null)[] | { x: number; y: number }[] }[];
  /** Source figures are drawn in muted colours. */
  seed?: boolean;
  caption?: string;
}

export interface SourceSeries {
  name: string;
  /** [x, y]: x is a category label or a number (a size, a rate), y the figure. */
  points: [string | number, number][];
}

/** A figure that a source thread published, drawn beside the chart that measures it again. */
export interface SourceFigure {
  id: string;
  title: string;
  /** Where the numbers come from, in one line. */
  source: string;
  x: string;
  y: string;
  /** 'category' draws bars, 'log' a line over a logarithmic x axis. */
  xScale: 'category' | 'log';
  series: SourceSeries[];
}

/** Our chart beside the source's figure that it measures again. */
export interface ChartPair {
  ours: ChartSpec;
  seed: SourceFigure;
}

/** A finite number rounded for JSON, or null (a gap in the chart). */
export const clean = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v) ? null : Number(v.toPrecision(6));

/** A bar chart: one dataset per value of `seriesKey`, one bar group per value of `xKey`. */
export function grouped(
  id: string,
  title: string,
  rows: ResultRow[],
  xKey: string,
  seriesKey: string,
  y: (r: ResultRow) => number | undefined,
  titles: [string, string],
): ChartSpec {
  const labels = distinct(rows, xKey);
  const series = distinct(rows, seriesKey);
  // the first row of each (x, series) pair, found in one pass
  const first = new Map<string, ResultRow>();
  for (const r of rows) {
    const k = JSON.stringify([param(r, xKey), series.length ? param(r, seriesKey) : '']);
    if (!first.has(k)) first.set(k, r);
  }
  return {
    id,
    title,
    type: 'bar',
    xTitle: titles[0],
    yTitle: titles[1],
    labels,
    datasets: (series.length ? series : ['']).map((s) => ({
      label: s,
      data: labels.map((l) => {
        const row = first.get(JSON.stringify([l, s]));
        return row ? clean(y(row)) : null;
      }),
    })),
  };
}

/** A source figure as a chart spec. */
export function sourceChart(f: SourceFigure): ChartSpec {
  if (f.xScale === 'log') {
    return {
      id: `seed-${f.id}`,
      title: f.title,
      type: 'line',
      xTitle: f.x,
      yTitle: f.y,
      xLog: true,
      seed: true,
      datasets: f.series.map((s) => ({
        label: s.name,
        data: s.points.map(([x, y]) => ({ x: Number(x), y })),
      })),
    };
  }
  const labels = [...new Set(f.series.flatMap((s) => s.points.map((p) => String(p[0]))))];
  return {
    id: `seed-${f.id}`,
    title: f.title,
    type: 'bar',
    xTitle: f.x,
    yTitle: f.y,
    seed: true,
    labels,
    datasets: f.series.map((s) => ({
      label: s.name,
      data: labels.map((l) => s.points.find((p) => String(p[0]) === l)?.[1] ?? null),
    })),
  };
}

/** A source figure's value by series name (or the first series) and x. */
export function figureValue(f: SourceFigure | undefined, x: string | number, series?: string) {
  const s = series === undefined ? f?.series[0] : f?.series.find((t) => t.name === series);
  return s?.points.find((p) => p[0] === x)?.[1];
}
