// The sockbuf.v1 results document (docs/results-schema.json): reading and checking it, merging several
// into one, and reading a row's columns whatever shape the runner gave them (a number, or an object
// with the median). Pure apart from loadResults, which reads files.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import type { HostInfo } from '../../observe/proc.js';
import { UsageError } from '../../policy/units.js';

export const SCHEMA = 'sockbuf.v1';

export interface ResultRow {
  scenario: string;
  [key: string]: unknown;
}

export interface Verdict {
  seed: string;
  text: string;
  ok?: boolean;
}

export interface ResultsDocument {
  schema: typeof SCHEMA;
  version: string;
  command: string | string[];
  params: Record<string, unknown>;
  host: HostInfo;
  startedAt?: string;
  seconds?: number;
  results: ResultRow[];
  skipped?: { scenario: string; reason: string }[];
  verdicts?: Verdict[];
  [key: string]: unknown;
}

const SCHEMA_FILE = new URL('../../../docs/results-schema.json', import.meta.url);
let validator: ValidateFunction | undefined;

/** Throws a UsageError naming the source and the first problems when `doc` is not a sockbuf.v1 document. */
export function checkResults(doc: unknown, source = 'results'): ResultsDocument {
  const schema = (doc as { schema?: unknown } | null)?.schema;
  if (typeof schema === 'string' && schema !== SCHEMA && schema.startsWith('sockbuf.')) {
    throw new UsageError(`${source}: schema '${schema}' is not ${SCHEMA}; this sockbuf reads ${SCHEMA}`);
  }
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
  }
  if (!validator(doc)) {
    const errs = (validator.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || '/'} ${e.message}`)
      .join('; ');
    throw new UsageError(`${source}: not a ${SCHEMA} results document (${errs})`);
  }
  return doc as ResultsDocument;
}

/** Reads and checks results files; bad JSON or a wrong document is a UsageError naming the file. */
export function loadResults(files: string[]): ResultsDocument[] {
  return files.map((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read results file '${file}': ${(err as Error).message}`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`results file '${file}' is not JSON: ${(err as Error).message}`);
    }
    return checkResults(doc, file);
  });
}

/** Several documents as one: rows, skips and verdicts concatenated; host and version of the first. */
export function mergeResults(docs: ResultsDocument[]): ResultsDocument {
  if (docs.length === 1) return docs[0];
  if (!docs.length) throw new UsageError('no results documents given');
  return {
    ...docs[0],
    command: docs.map((d) => (Array.isArray(d.command) ? d.command.join(' ') : d.command)).join(' + '),
    params: Object.assign({}, ...docs.map((d) => d.params)),
    results: docs.flatMap((d) => d.results),
    skipped: docs.flatMap((d) => d.skipped ?? []),
    verdicts: docs.flatMap((d) => d.verdicts ?? []),
  };
}

/** A numeric column: a plain number, or the median of a { median, min, max } column. */
export function num(row: ResultRow, key: string): number | undefined {
  const v = row[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
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
  const out: string[] = [];
  for (const r of rows) {
    const v = param(r, key);
    if (v !== undefined && !out.includes(v)) out.push(v);
  }
  return out;
}
