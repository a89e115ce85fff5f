// The report as text for stdout: the result tables, then one verdict line per seed. The seeds are
// given (src/bench/seeds): they tag the tables and judge the results. Pure.
import type { Seed } from '../seeds/seed.js';
import type { ResultsDocument } from './results.js';
import { tables, textTable } from './views.js';

export function textReport(doc: ResultsDocument, seeds: Seed[]): string {
  const lines = doc.verdicts?.length
    ? doc.verdicts
    : seeds.map((s) => s.verdict(doc)).filter((v) => v !== undefined);
  const skipped = (doc.skipped ?? []).map((s) => `skipped ${s.scenario}: ${s.reason}`);
  const seedOf = (scenario: string) => seeds.find((s) => s.tables.includes(scenario))?.id;
  return [...tables(doc, seedOf).map(textTable), lines.map((v) => v.text).join('\n'), skipped.join('\n')]
    .filter(Boolean)
    .join('\n\n');
}
