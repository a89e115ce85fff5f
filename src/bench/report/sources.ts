// Several results files in one report. Merging keeps each file's name, host, command and parameters
// (`files`) and tags every row and skip with the file it came from (`file`); the report splits a merged
// document back into its files, so that every verdict, table, chart and Δ is computed within one file
// and names it. Pure.

import { UsageError } from '../../errors.js';
import type { HostInfo } from '../../observe/proc.js';
import { loadedFrom, type ResultRow, type ResultsDocument } from './results.js';

/** What a merged document keeps of each file it was made of. */
export type SourceFile = { name: string } & Pick<
  ResultsDocument,
  'version' | 'command' | 'params' | 'host' | 'startedAt' | 'seconds'
>;

/** One file's part of a report: `file` is undefined when the report has one file only. */
export interface Source {
  file?: string;
  doc: ResultsDocument;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A document's `files`, when it is a merge of two or more (entries that are not files are ignored). */
function filesOf(doc: ResultsDocument): SourceFile[] {
  if (!Array.isArray(doc.files)) return [];
  const out: SourceFile[] = [];
  const seen = new Set<string>();
  for (const f of doc.files as unknown[]) {
    if (!isObject(f) || typeof f.name !== 'string' || seen.has(f.name)) continue;
    seen.add(f.name);
    const host = isObject(f.host) && typeof f.host.kernel === 'string' && isObject(f.host.sysctls);
    out.push({
      name: f.name,
      version: typeof f.version === 'string' ? f.version : doc.version,
      command: typeof f.command === 'string' || Array.isArray(f.command) ? (f.command as string) : '',
      params: isObject(f.params) ? f.params : {},
      host: host ? (f.host as HostInfo) : doc.host,
      ...(typeof f.startedAt === 'string' ? { startedAt: f.startedAt } : {}),
      ...(typeof f.seconds === 'number' ? { seconds: f.seconds } : {}),
    });
  }
  return out.length > 1 ? out : [];
}

/**
 * The files a report shows: one (the document itself, unnamed) or, for a merged document, each of its
 * files with its own rows, skips, host, command and parameters. Rows naming no listed file form a part
 * of their own, so that no row is lost or credited to another file.
 */
export function sources(doc: ResultsDocument): Source[] {
  const files = filesOf(doc);
  if (!files.length) return [{ doc }];
  const rows = new Map<string, ResultRow[]>(files.map((f) => [f.name, []]));
  const stray: ResultRow[] = [];
  for (const r of doc.results) (rows.get(r.file as string) ?? stray).push(r);
  const skipped = doc.skipped ?? [];
  const out: Source[] = files.map((f) => ({
    file: f.name,
    doc: {
      schema: doc.schema,
      ...f,
      results: rows.get(f.name) ?? [],
      skipped: skipped.filter((s) => (s as { file?: unknown }).file === f.name),
    },
  }));
  if (stray.length) {
    const file = '(rows that name no file of this merge)';
    out.push({ file, doc: { ...doc, files: undefined, verdicts: undefined, results: stray, skipped: [] } });
  }
  return out;
}

/**
 * Several documents as one: every row and skip carries the name of its file (`file`), `files` keeps each
 * file's host, command, version and parameters, and `host`/`version` are the first file's (for readers
 * of one document). Verdicts are not carried over: a report judges each file from its own rows. Names
 * are `given[i]`, else the file the document was loaded from, else "results N"; a name given twice gets
 * " (2)". A merged document merged again keeps its files' names.
 */
export function mergeResults(docs: ResultsDocument[], given: string[] = []): ResultsDocument {
  if (!docs.length) throw new UsageError('no results documents given');
  if (docs.length === 1) return docs[0];
  const seen = new Map<string, number>();
  const unique = (name: string) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n === 1 ? name : `${name} (${n})`;
  };
  const parts = docs.flatMap((d, i) =>
    sources(d).map((s) => ({
      name: unique(s.file ?? given[i] ?? loadedFrom(d) ?? `results ${i + 1}`),
      doc: s.doc,
    })),
  );
  const first = docs[0];
  return {
    schema: first.schema,
    version: first.version,
    command: parts
      .map((p) => (Array.isArray(p.doc.command) ? p.doc.command.join(' ') : p.doc.command))
      .join(' + '),
    params: {},
    host: first.host,
    results: parts.flatMap((p) => p.doc.results.map((r) => ({ ...r, file: p.name }))),
    skipped: parts.flatMap((p) => (p.doc.skipped ?? []).map((s) => ({ ...s, file: p.name }))),
    files: parts.map(
      (p): SourceFile => ({
        name: p.name,
        version: p.doc.version,
        command: p.doc.command,
        params: p.doc.params,
        host: p.doc.host,
        ...(p.doc.startedAt !== undefined ? { startedAt: p.doc.startedAt } : {}),
        ...(p.doc.seconds !== undefined ? { seconds: p.doc.seconds } : {}),
      }),
    ),
  };
}
