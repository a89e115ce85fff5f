// The five seeds in order, and their verdicts. Pure.
import type { ResultsDocument, Verdict } from '../report/results.js';
import { seed000 } from './000-osiris.js';
import { seed001 } from './001-rocketmq.js';
import { seed002 } from './002-otp-read-buffer.js';
import { seed003 } from './003-agave-streamer.js';
import { seed004 } from './004-udp-ingest.js';
import type { Seed } from './seed.js';

export { entryCommand, type Seed, type SeedId, type SuiteEntry } from './seed.js';

export const SEEDS: Seed[] = [seed000, seed001, seed002, seed003, seed004];

/** The verdict lines that the results support, seed by seed (a seed nothing measured has none). */
export function verdicts(doc: ResultsDocument, seeds: Seed[] = SEEDS): Verdict[] {
  return seeds.map((s) => s.verdict(doc)).filter((v): v is Verdict => !!v);
}

/** The seed whose section shows a table (a scenario name, or `udp-max`). */
export function seedOfTable(scenario: string, seeds: Seed[] = SEEDS): Seed | undefined {
  return seeds.find((s) => s.tables.includes(scenario));
}
