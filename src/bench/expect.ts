import { UsageError } from '../errors.js';
// `--expect EXPR`: a figure a benchmark must reach, checked against the medians. Pure.
//
//   EXPR  := SIDE OP NUMBER            OP: >=  >  <=  <  ==  !=
//   SIDE  := TERM | TERM '/' TERM      a value, or the ratio of two values
//   TERM  := NAME | COLUMN '[' LABEL ']'
//
// - `COLUMN[LABEL]` is the median of COLUMN in the points that have LABEL among their labels
//   (`bytesPerSecond[adaptive]`).
// - A bare NAME is a column when some point has that column (`lossPct <= 0`: every point);
//   otherwise a label, standing for the scenario's primary column (`adaptive` =
//   `bytesPerSecond[adaptive]` when primary is bytesPerSecond).
// - In a ratio, each point of the left side is paired with the point of the right side that has
//   the same labels apart from the ones named: `adaptive/data >= 1.3` checks adaptive against data
//   at every size. Every pair (or point) must meet the figure.

export type Op = '>=' | '>' | '<=' | '<' | '==' | '!=';

export interface Term {
  /** A column, or (with no label) a name that may be a column or a label. */
  name: string;
  label?: string;
}

export interface Expectation {
  text: string;
  left: Term;
  right?: Term;
  op: Op;
  value: number;
}

/** What --expect sees of one point: its labels and the median of each numeric column. */
export interface ExpectPoint {
  name: string;
  labels: Record<string, string>;
  median: Record<string, number>;
}

export interface Check {
  /** e.g. `bytesPerSecond[adaptive 64K] / bytesPerSecond[data 64K]` */
  what: string;
  value: number;
  ok: boolean;
}

export interface Verdict {
  expectation: Expectation;
  ok: boolean;
  checks: Check[];
}

const NAME = '[A-Za-z0-9_.:+-]+';
const TERM_RE = new RegExp(`^(${NAME})(?:\\[(${NAME})\\])?$`);
const EXPR_RE = /^(.+?)\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$/;

function bad(text: string, why: string): never {
  throw new UsageError(
    (name) =>
      `invalid value for ${name('expect')}: '${text}' (${why}; expected e.g. 'adaptive/data >= 1.3' or 'lossPct[64K] <= 0')`,
    'expect',
    { value: text },
  );
}

function parseTerm(text: string, part: string): Term {
  const m = TERM_RE.exec(part.trim());
  if (!m) bad(text, `'${part.trim()}' is not NAME or COLUMN[LABEL]`);
  return m[2] === undefined ? { name: m[1] } : { name: m[1], label: m[2] };
}

export function parseExpect(text: string): Expectation {
  const m = EXPR_RE.exec(text.trim());
  if (!m) bad(text, 'no comparison such as >= NUMBER');
  const sides = m[1].split('/');
  if (sides.length > 2) bad(text, 'at most one /');
  return {
    text: text.trim(),
    left: parseTerm(text, sides[0]),
    right: sides.length === 2 ? parseTerm(text, sides[1]) : undefined,
    op: m[2] as Op,
    value: Number(m[3]),
  };
}

function compare(a: number, op: Op, b: number): boolean {
  switch (op) {
    case '>=':
      return a >= b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '<':
      return a < b;
    case '==':
      return a === b;
    case '!=':
      return a !== b;
  }
}

interface Resolved {
  column: string;
  points: ExpectPoint[];
  /** The label dimensions the term selected on (free when pairing). */
  dims: string[];
}

function resolve(e: Expectation, t: Term, points: ExpectPoint[], primary: string | undefined): Resolved {
  const isColumn = (n: string) => points.some((p) => n in p.median);
  const select = (label: string) => {
    const dims = new Set<string>();
    const sel = points.filter((p) => {
      const hit = Object.entries(p.labels).filter(([, v]) => v === label);
      for (const [k] of hit) dims.add(k);
      return hit.length > 0;
    });
    if (!sel.length)
      bad(e.text, `no point is labelled '${label}' (points: ${points.map((p) => p.name).join(', ')})`);
    return { points: sel, dims: [...dims] };
  };
  if (t.label !== undefined) {
    if (!isColumn(t.name)) bad(e.text, `no column '${t.name}'`);
    return { column: t.name, ...select(t.label) };
  }
  if (isColumn(t.name)) return { column: t.name, points, dims: [] };
  if (!primary) bad(e.text, `no column '${t.name}', and this scenario has no primary column for a label`);
  return { column: primary, ...select(t.name) };
}

function fmt(n: number): string {
  return Number.isFinite(n) ? String(Number(n.toPrecision(4))) : String(n);
}

/** Checks one expectation against the medians; UsageError for names that match nothing. */
export function evaluate(e: Expectation, points: ExpectPoint[], primary?: string): Verdict {
  const left = resolve(e, e.left, points, primary);
  const checks: Check[] = [];
  const value = (r: Resolved, p: ExpectPoint) => p.median[r.column] ?? Number.NaN;
  if (!e.right) {
    for (const p of left.points) {
      const v = value(left, p);
      checks.push({ what: `${left.column}[${p.name}]`, value: v, ok: compare(v, e.op, e.value) });
    }
  } else {
    const right = resolve(e, e.right, points, primary);
    const free = new Set([...left.dims, ...right.dims]);
    for (const a of left.points) {
      const same = (b: ExpectPoint) =>
        Object.entries(a.labels).every(([k, v]) => free.has(k) || b.labels[k] === v) &&
        Object.keys(b.labels).every((k) => free.has(k) || k in a.labels);
      const partners = right.points.filter(same);
      if (partners.length !== 1) {
        bad(
          e.text,
          `${partners.length ? 'several points' : 'no point'} of the right side pair with '${a.name}'`,
        );
      }
      const b = partners[0];
      const v = value(left, a) / value(right, b);
      checks.push({
        what: `${left.column}[${a.name}] / ${right.column}[${b.name}]`,
        value: v,
        ok: compare(v, e.op, e.value),
      });
    }
  }
  return { expectation: e, ok: checks.every((c) => c.ok), checks };
}

/** "ok    adaptive/data >= 1.3: bytesPerSecond[adaptive 64K] / bytesPerSecond[data 64K] = 1.42" lines. */
export function describeVerdict(v: Verdict): string[] {
  return v.checks.map(
    (c) =>
      `${c.ok ? 'met  ' : 'UNMET'} --expect '${v.expectation.text}': ${c.what} = ${fmt(c.value)} (wanted ${v.expectation.op} ${fmt(v.expectation.value)})`,
  );
}
