// The five seeds in order, and their verdicts. Pure.
import type { ResultsDocument, SeedVerdict } from '../report/results.js';
import { seed000 } from './000-osiris.js';
import { seed001 } from './001-rocketmq.js';
import { seed002 } from './002-otp-read-buffer.js';
import { seed003 } from './003-agave-streamer.js';
import { seed004 } from './004-udp-ingest.js';
import { judgeSeeds, type Seed } from './seed.js';

export { entryCommand, type Seed, type SeedId, type SuiteEntry } from './seed.js';

/** The seeds (the source threads sockbuf answers), each with its tables, points and verdict. */
export const SEEDS: Seed[] = [seed000, seed001, seed002, seed003, seed004];

/** The verdict lines that the results support, seed by seed (a seed nothing measured has none). */
export function verdicts(doc: ResultsDocument, seeds: Seed[] = SEEDS): SeedVerdict[] {
  return judgeSeeds(doc, seeds);
}

/** The suite's exit status: 1 when a seed was measured and not reproduced (skipped ones do not count). */
export function suiteExitCode(doc: ResultsDocument): 0 | 1 {
  return (doc.verdicts ?? []).some((v) => v.status === 'not reproduced' || v.ok === false) ? 1 : 0;
}

/** The seed whose section shows a table (a scenario name, or `udp-max`). @internal (exported for its test) */
export function seedOfTable(scenario: string, seeds: Seed[] = SEEDS): Seed | undefined {
  return seeds.find((s) => s.tables.includes(scenario));
}
