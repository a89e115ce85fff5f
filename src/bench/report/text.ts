// The report as text for stdout: the seed-style tables, then one verdict line per seed. Pure.
import { verdicts } from '../verdicts.js';
import type { ResultsDocument } from './results.js';
import { tables, textTable } from './views.js';

export function reportText(doc: ResultsDocument): string {
  const lines = doc.verdicts?.length ? doc.verdicts : verdicts(doc);
  const skipped = (doc.skipped ?? []).map((s) => `skipped ${s.scenario}: ${s.reason}`);
  return [...tables(doc).map(textTable), lines.map((v) => v.text).join('\n'), skipped.join('\n')]
    .filter(Boolean)
    .join('\n\n');
}
