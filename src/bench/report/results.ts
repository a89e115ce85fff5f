// The sockbuf.v1 results document (docs/results-schema.json): reading and checking it, merging several
// into one, and reading a row's columns whatever shape the runner gave them (a number, or an object
// with the median). Pure apart from loadResults, which reads files.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ValidateFunction } from 'ajv';
import { UsageError } from '../../errors.js';
import type { HostInfo } from '../../observe/proc.js';
import { parseBoundedJson } from '../../policy/json.js';
import { printable } from '../../policy/printable.js';
import { InputLimitError, readBoundedText } from '../../sys/bounded-read.js';
import { SCHEMA } from '../../sys/package.js';
import { clip } from './bounds.js';

export { SCHEMA };

/** A string from input, fit for an error message: control characters escaped, cut when long. */
const quote = (text: string) => printable(clip(text));

/** A result row as the report reads it: flat (see flattenRow). */
export interface ResultRow {
  scenario: string;
  [key: string]: unknown;
}

/** 'too noisy': measured, but a ratio's interval was too wide to judge (the suite exits 1: rerun). */
export type VerdictStatus = 'reproduced' | 'not reproduced' | 'skipped' | 'too noisy';

/** What a seed's verdict says of a results document: reproduced, not reproduced or not measured, and why. */
export interface SeedVerdict {
  seed: string;
  /** The line people read: the status, our figures beside the seed's, and the criterion. */
  text: string;
  /** true when reproduced, false when not; absent when skipped. */
  ok?: boolean;
  status?: VerdictStatus;
  /** Why it was skipped. */
  why?: string;
  criterion?: string;
}

/** A sockbuf.v1 results document (`--json`, `--out`): the command, its parameters, the host and the rows. */
export interface ResultsDocument {
  schema: typeof SCHEMA;
  version: string;
  command: string | string[];
  params: Record<string, unknown>;
  host: HostInfo;
  startedAt?: string;
  seconds?: number;
  results: ResultRow[];
  skipped?: { scenario: string; reason: string; seed?: string }[];
  verdicts?: SeedVerdict[];
  /** A merged document's files (sources.ts), each row then naming its file in `file`. */
  files?: unknown;
  [key: string]: unknown;
}

const SCHEMA_FILE = new URL('../../../docs/results-schema.json', import.meta.url);
let validator: ValidateFunction | undefined;

/**
 * Throws a UsageError naming the source and the first problems when `doc` is not a sockbuf.v1
 * document; returns it with flat rows (see flattenRow).
 */
export function checkResults(doc: unknown, source = 'results'): ResultsDocument {
  const schema = (doc as { schema?: unknown } | null)?.schema;
  if (typeof schema === 'string' && schema !== SCHEMA && schema.startsWith('sockbuf.')) {
    throw new UsageError(
      `${quote(source)}: schema '${quote(schema)}' is not ${SCHEMA}; this sockbuf reads ${SCHEMA}`,
    );
  }
  if (!validator) {
    // Loaded on first use: every sockbuf process (each bench end) imports this module, few check files.
    const { Ajv } = createRequire(import.meta.url)('ajv') as { Ajv: typeof AjvClass };
    const ajv = new Ajv({ allErrors: true, strict: false });
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
  }
  if (!validator(doc)) {
    const errs = (validator.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || '/'} ${e.message}`)
      .join('; ');
    throw new UsageError(`${quote(source)}: not a ${SCHEMA} results document (${quote(errs)})`);
  }
  const d = doc as ResultsDocument;
  const rows = d.results.map((r) => flattenRow(r, d.params));
  const missing = rows.findIndex((r) => typeof r.scenario !== 'string');
  if (missing >= 0) {
    throw new UsageError(
      `${quote(source)}: /results/${missing} has no scenario (and params.scenario is not set)`,
    );
  }
  const negative = negativeRate(rows);
  if (negative) throw new UsageError(`${quote(source)}: ${quote(negative)}`);
  return { ...d, results: rows };
}

/** A rate (a column named …PerSecond) below 0 anywhere in the rows: where, or undefined. No rate is. */
function negativeRate(rows: ResultRow[]): string | undefined {
  for (const [i, r] of rows.entries()) {
    for (const [k, v] of Object.entries(r)) {
      if (!k.endsWith('PerSecond')) continue;
      const values =
        typeof v === 'number'
          ? [v]
          : isObject(v)
            ? [v.median, v.min, v.max, ...(Array.isArray(v.values) ? v.values : [])]
            : [];
      const below = values.find((x) => typeof x === 'number' && x < 0);
      if (below !== undefined) return `/results/${i}/${k} is ${below}: a rate is never below 0`;
    }
  }
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The runner's point ({ name, labels, runs, median, min, max }, src/bench/runner.ts) as one flat row:
 * scenario (the row's, else params.scenario), placement name, the placement's numbers (rttMs …),
 * the labels, each numeric column as { median, min, max }, and the text cells of the last run.
 * A row that is already flat is returned as it is.
 */
export function flattenRow(raw: Record<string, unknown>, params: Record<string, unknown> = {}): ResultRow {
  if (!isObject(raw.labels) || !isObject(raw.median)) return raw as ResultRow;
  const placement = raw.placement ?? params.placement;
  const out: ResultRow = { scenario: (raw.scenario ?? params.scenario) as string };
  if (isObject(placement)) {
    out.placement = placement.name;
    for (const [k, v] of Object.entries(placement)) if (typeof v === 'number') out[k] = v;
  } else if (typeof placement === 'string') out.placement = placement;
  const runs = Array.isArray(raw.runs) ? (raw.runs as Record<string, unknown>[]) : [];
  for (const [k, v] of Object.entries(runs[runs.length - 1] ?? {})) if (typeof v !== 'number') out[k] = v;
  Object.assign(out, raw.labels);
  const min = isObject(raw.min) ? raw.min : {};
  const max = isObject(raw.max) ? raw.max : {};
  for (const [k, v] of Object.entries(raw.median)) out[k] = { median: v, min: min[k], max: max[k] };
  out.repeats = runs.length;
  if (typeof raw.name === 'string') out.name = raw.name;
  return out;
}

/**
 * A results file larger than this, or nested deeper, is refused before it is parsed: 64 MiB, over a
 * thousand times a full suite's document (~50 KB). Reading stops there, whatever the input (a pipe or
 * a device has no size to check first): `report /dev/zero` then ends in ~0.3 s (was 256 MiB: ~1.5 s
 * and 315 MB RSS on the loaded 2-CPU test host).
 */
export const MAX_RESULTS_FILE_BYTES = 64 << 20;
export const MAX_RESULTS_DEPTH = 32;

/** A results document from its text: too deep, not JSON or a wrong document is a UsageError. */
export function parseResults(text: string, source = 'results'): ResultsDocument {
  let doc: unknown;
  // a byte order mark (what some Windows editors write first) is no part of the JSON
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    doc = parseBoundedJson(text, { maxLength: MAX_RESULTS_FILE_BYTES, maxDepth: MAX_RESULTS_DEPTH });
  } catch (err) {
    throw new UsageError(`results file '${quote(source)}' is not JSON: ${quote((err as Error).message)}`);
  }
  const checked = checkResults(doc, source);
  loadedNames.set(checked, source);
  return checked;
}

// The file each parsed document was read from (a document made in memory has none): merging names its rows after it.
const loadedNames = new WeakMap<object, string>();

/** The file (or `source`) `doc` was parsed from, if it was. */
export function loadedFrom(doc: ResultsDocument): string | undefined {
  return loadedNames.get(doc);
}

/**
 * Reads and checks results files; unreadable, larger than MAX_RESULTS_FILE_BYTES, bad JSON or a
 * wrong document is a UsageError naming the file.
 */
export function loadResults(files: string[]): ResultsDocument[] {
  return files.map((file) => {
    let text: string;
    try {
      // a regular file's size is known before reading; a pipe, FIFO or device (/dev/stdin, /dev/zero)
      // says 0 and may never end, so the read itself stops one byte past the limit
      const st = statSync(file);
      if (st.isFile() && st.size > MAX_RESULTS_FILE_BYTES)
        throw new InputLimitError(file, MAX_RESULTS_FILE_BYTES);
      text = readBoundedText(file, MAX_RESULTS_FILE_BYTES, file);
    } catch (err) {
      if (err instanceof InputLimitError)
        throw new UsageError(
          `results file '${quote(file)}' holds more than the ${MAX_RESULTS_FILE_BYTES} bytes a results file may have (reading stopped there)`,
        );
      throw new UsageError(`cannot read results file '${quote(file)}': ${quote((err as Error).message)}`);
    }
    return parseResults(text, file);
  });
}

/** A numeric column: a plain number, or the median of a { median, min, max } column. */
export function num(row: ResultRow, key: string): number | undefined {
  const v = row[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (v && typeof v === 'object' && typeof (v as { median?: unknown }).median === 'number') {
    return (v as { median: number }).median;
  }
  return undefined;
}

/** The first of several column names that the row has, as a number. */
export function firstNum(row: ResultRow, keys: string[]): number | undefined {
  for (const k of keys) {
    const v = num(row, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** A parameter as text for labels: a string, a number, a boolean; undefined otherwise. */
export function param(row: ResultRow, key: string): string | undefined {
  const v = row[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Rows of one scenario (and, when given, one placement: rows without one count as local). */
export function rowsOf(doc: ResultsDocument, scenario: string, placement?: string): ResultRow[] {
  return doc.results.filter(
    (r) =>
      r.scenario === scenario &&
      (placement === undefined || (typeof r.placement === 'string' ? r.placement : 'local') === placement),
  );
}

/** Distinct values of a parameter, in the order they first appear. */
export function distinct(rows: ResultRow[], key: string): string[] {
  const out = new Set<string>();
  for (const r of rows) {
    const v = param(r, key);
    if (v !== undefined) out.add(v);
  }
  return [...out];
}

/** A row of a search for the highest loss-free rate rather than a point of the ladder. */
export function isFindMax(row: ResultRow): boolean {
  return row.findMax === true || row.mode === 'find-max' || num(row, 'maxLossFreeRate') !== undefined;
}

/** A UDP row's receive path (`dgram`, `batch`, `gso-batch`, `batch+gro`). */
export function pathOf(row: ResultRow): string | undefined {
  return param(row, 'path') ?? param(row, 'receiver');
}

/**
 * The round-trip time the lab was set up with, in ms: the row's placementRttUs (the suite copies the
 * placement's numbers into its rows), else the document's params.placement.rttUs (a single bench).
 */
export function labRttMs(doc: ResultsDocument, row: ResultRow | undefined): number | undefined {
  const p = doc.params.placement;
  const us =
    (row && num(row, 'placementRttUs')) ?? (isObject(p) && typeof p.rttUs === 'number' ? p.rttUs : undefined);
  return us === undefined ? undefined : us / 1000;
}
