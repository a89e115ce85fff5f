// What a seed is: one of the five public threads (issues and pull requests of other projects) that found
// a socket-buffer effect and published figures for it. sockbuf measures each one again. A seed module
// holds what its thread says (its tables, with the thread's own figures), the suite entries whose
// scenario points measure it, its verdict with the criterion it is judged by, and the charts the report
// draws beside the thread's figures. Pure.
import type { ChartPair, SourceFigure } from '../report/charts.js';
import type { ResultsDocument, SeedVerdict } from '../report/results.js';

export type SeedId = '000' | '001' | '002' | '003' | '004';

/** One run of the quick suite (`sockbuf bench`): a scenario with the options that measure a seed. */
export interface SuiteEntry {
  /** Short name: `--only tcp-lab`. */
  id: string;
  /** What it measures, for progress and skip lines. */
  title: string;
  seed: SeedId;
  /** A built-in scenario name (or a path to a scenario module). */
  scenario: string;
  /** The scenario's own options: the quick run, and the long one (`--full`). */
  quick: string[];
  full: string[];
  repeat: { quick: number; full: number };
  placement: 'local' | 'lab';
  /** Lab shorthand for placement 'lab' (e.g. `rtt=2ms,bandwidth=5gbit`). */
  lab?: string;
  /** The issue that brings the scenario, named when it is missing. */
  issue?: number;
  /** Changes host settings (sysctls): runs only when the user said --yes. */
  changesHost?: boolean;
  /** Commands it needs on PATH (skipped, saying which, where one is missing). */
  needs?: { command: string; package: string }[];
}

/** One seed: a source thread's claim, the points that measure it and how its verdict is reached. */
export interface Seed {
  id: SeedId;
  title: string;
  /** The thread: project, kind, title and author, as a reader would find it. */
  thread: string;
  /** Where the thread is (a search, when the thread itself could not be pinned down). */
  url?: string;
  /** What the thread found, in a sentence or two. */
  finding: string;
  /** When we call it reproduced, in one sentence (the verdict applies it). */
  criterion: string;
  /** The thread's own tables and figures. */
  figures: SourceFigure[];
  /** The suite entries that measure it. */
  entries: SuiteEntry[];
  /** The result tables (scenario, or `udp-max`) shown in its section. */
  tables: string[];
  /** Our figures beside the thread's, judged by the criterion; undefined when nothing measured it. */
  verdict(doc: ResultsDocument): SeedVerdict | undefined;
  /** Our charts, each beside the thread's figure it measures again. */
  charts(doc: ResultsDocument): ChartPair[];
  /** A table of our figures shaped as the thread's (seed 001's variants A–D), when measured. */
  summary?(doc: ResultsDocument): SummaryTable | undefined;
}

/** A small table for people: a title, column heads and rows of cells (docs/seeds.md, the report). */
export interface SummaryTable {
  title: string;
  head: string[];
  rows: string[][];
  note?: string;
}

/**
 * What a seed is, in one sentence for the pages that show seeds (the report, docs/seeds.md); `code`
 * marks up a command.
 */
export function seedMeaning(count: number, code = (command: string) => command): string {
  return (
    `A seed is one of ${count} public threads — issues and pull requests of other projects — that found a ` +
    `socket-buffer effect and published figures for it; ${code('sockbuf bench')} measures each one again and ` +
    'says whether it reproduced.'
  );
}

/**
 * The verdict lines that the results support, seed by seed: each seed's own verdict, or, for a seed
 * that nothing measured, a skipped line with the reasons its entries were skipped; none when neither.
 */
export function judgeSeeds(doc: ResultsDocument, seeds: Seed[]): SeedVerdict[] {
  const out: SeedVerdict[] = [];
  for (const s of seeds) {
    const v = s.verdict(doc);
    if (v) out.push(v);
    else {
      const why = (doc.skipped ?? [])
        .filter((k) => k.seed === s.id || s.entries.some((e) => e.id === k.scenario))
        .map((k) => `${k.scenario}: ${k.reason}`);
      if (why.length) out.push(judge(s, 'not measured', undefined, why.join('; ')));
    }
  }
  return out;
}

/** The command that measures an entry again, for people (docs/seeds.md, skip lines). */
export function entryCommand(e: SuiteEntry, full = false, repeatUsed?: number): string {
  const args = full ? e.full : e.quick;
  // what ran: a suite-wide --repeat replaces the entry's own
  const repeat = repeatUsed ?? (full ? e.repeat.full : e.repeat.quick);
  const bench = ['sockbuf', 'bench', e.scenario, ...args, '--repeat', String(repeat)].join(' ');
  return e.placement === 'lab' ? `sockbuf lab ${labFlags(e.lab ?? '')} -- ${bench.slice(8)}` : bench;
}

function labFlags(shorthand: string): string {
  return shorthand
    .split(',')
    .filter(Boolean)
    .map((kv) => `--${kv.replace('=', ' ')}`)
    .join(' ');
}

/**
 * A seed's verdict: reproduced when `ok`, not reproduced when `ok` is false, skipped (with why) when it
 * is undefined. `figures` is ours beside the seed's.
 */
export function judge(
  seed: Seed | { id: string; criterion: string },
  figures: string,
  ok: boolean | undefined,
  why = 'the criterion could not be judged from these results',
): SeedVerdict {
  const status = ok === true ? 'reproduced' : ok === false ? 'not reproduced' : 'skipped';
  const head = ok === undefined ? `skipped: ${why}` : status;
  return {
    seed: seed.id,
    text: `seed ${seed.id}: ${head} — ${figures} (criterion: ${seed.criterion})`,
    ...(ok === undefined ? { why } : { ok }),
    status,
    criterion: seed.criterion,
  };
}

/** Verdict text helpers shared by the seed modules. */
export const x2 = (v: number) => `${v.toFixed(2)} ×`;
export const pc = (v: number) => `${v < 10 ? v.toFixed(1) : Math.round(v)} %`;
export const si = (v: number) =>
  v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : v >= 1e3 ? `${Math.round(v / 1e3)} k` : `${Math.round(v)}`;
