// The report as text for stdout: the result tables, then one verdict line per seed. The seeds are
// given (src/bench/seeds): they tag the tables and judge the results. Several files are judged file by
// file, each table, verdict and skip naming its file, after one line per file with its host. Every
// string that came from a results file is printed with its control characters shown escaped. Pure.
import { printable } from '../../policy/printable.js';
import { judgeSeeds, type Seed } from '../seeds/seed.js';
import { clip, MAX_VERDICT } from './bounds.js';
import type { ResultsDocument } from './results.js';
import { sources } from './sources.js';
import { tables, textTable } from './tables.js';

const line = (text: string, max?: number) => printable(clip(text, max));

/** A file's one-line description: what ran, when, on which host. */
function describe(file: string, doc: ResultsDocument): string {
  const command = Array.isArray(doc.command) ? doc.command.join(' ') : String(doc.command);
  const cpus = doc.host.cpus ? `, ${doc.host.cpus} CPUs` : '';
  const when = doc.startedAt ? `, ${doc.startedAt}` : '';
  return line(
    `${file}: sockbuf ${command} (sockbuf ${doc.version}${when}), Linux ${doc.host.kernel}${cpus}`,
    600,
  );
}

export function textReport(doc: ResultsDocument, seeds: Seed[]): string {
  const seedOf = (scenario: string) => seeds.find((s) => s.tables.includes(scenario))?.id;
  const parts = sources(doc);
  const multi = parts.length > 1;
  const heads = multi ? [parts.map((p) => describe(p.file ?? '', p.doc)).join('\n')] : [];
  const tableText = parts.flatMap((p) => tables(p.doc, seedOf, p.file).map(textTable));
  const verdicts: string[] = [];
  const skipped: string[] = [];
  for (const p of parts) {
    const from = p.file === undefined ? '' : `[${p.file}] `;
    if (!p.doc.results.length)
      verdicts.push(line(`${from}no result rows: nothing was measured, so no seed is judged`));
    for (const v of judgeSeeds(p.doc, seeds)) verdicts.push(line(`${from}${v.text}`, MAX_VERDICT));
    for (const s of p.doc.skipped ?? [])
      skipped.push(line(`${from}skipped ${s.scenario}: ${s.reason}`, 1000));
  }
  return [...heads, ...tableText, verdicts.join('\n'), skipped.join('\n')].filter(Boolean).join('\n\n');
}
