// The quick suite, `sockbuf bench` with no scenario: every seed's entries (src/bench/seeds) once,
// short, through the runner, into one sockbuf.v1 document with one verdict line per seed. A scenario
// that is not built in (yet), or that needs what this host lacks (root for the lab, a tool), is skipped
// with the reason; an entry whose options its scenario refuses is a UsageError, before anything runs.

import { EnvironmentError, UsageError } from '../errors.js';
import { checkOption, OPTIONS } from '../policy/option-registry.js';
import { which } from '../sys/process.js';
import { measure, parseRepeat, scenarioParams } from './bench.js';
import { resultsDocument } from './document.js';
import { type Placement, resolvePlacement } from './placement.js';
import { checkResults, type ResultRow, type ResultsDocument } from './report/results.js';
import { type Progress, RunFailure } from './runner.js';
import type { Scenario } from './scenario.js';
import { loadScenario, scenarioNames } from './scenario-registry.js';
import { entryCommand, SEEDS, type Seed, type SeedId, type SuiteEntry, verdicts } from './seeds/index.js';

export type { SuiteEntry } from './seeds/seed.js';
export { entryCommand };

const ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * The suite: each seed's entries (src/bench/seeds), in the seeds' order. Quick parameters are chosen to
 * fit the whole suite in under 3 minutes on a 2-CPU machine; `--full` runs the scenarios' own defaults
 * (longer durations, more sizes, more repeats).
 */
export const SUITE: SuiteEntry[] = SEEDS.flatMap((s) => s.entries);

/** The scenario's parameters from its own options, the way `sockbuf bench NAME …` parses them. */
export function entryParams(scenario: Scenario, argv: string[]): Record<string, unknown> {
  try {
    return scenarioParams(scenario, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    throw new UsageError(`suite: bad options for ${scenario.name} (${argv.join(' ')}): ${err.message}`);
  }
}

/** Why an entry cannot run here, or undefined. Pure apart from the list of built-in scenarios. */
export function skipReason(
  e: SuiteEntry,
  builtIn: string[] = scenarioNames(),
  root = ROOT,
  yes = false,
  have: (command: string) => boolean = (c) => which(c) !== undefined,
): string | undefined {
  const isPath = e.scenario.includes('/');
  if (!isPath && !builtIn.includes(e.scenario)) {
    return `scenario '${e.scenario}' is not built in yet${e.issue ? ` (issue ${e.issue})` : ''}`;
  }
  if (e.placement === 'lab' && !root) return 'the lab needs root (network namespaces, tun devices)';
  if (e.changesHost && !yes)
    return 'it changes host sysctls (restored afterwards): run with --yes to include it';
  const missing = e.needs?.find((n) => !have(n.command));
  if (missing) return `${missing.command} is not installed (Debian: ${missing.package})`;
  return undefined;
}

/** What runSuite takes: which entries, the repeats, where the results go and a progress callback. */
export interface SuiteOptions {
  full?: boolean;
  /** Repeats of every entry (1 to 1000, a number or a string such as '3'), instead of each entry's own. */
  repeat?: number | string;
  /** Allow entries that change host settings (restored afterwards). */
  yes?: boolean;
  /** Entry ids to run (default all). */
  only?: string[];
  entries?: SuiteEntry[];
  /** The seeds that judge the results (default the five of src/bench/seeds). */
  seeds?: Seed[];
  /** Called as each run starts, with the runs done of the whole suite's and the entry running. */
  onProgress?: (p: Progress & { entry: string }) => void;
  /** Called with each entry as it starts, is skipped or fails (for stderr lines). */
  onEntry?: (e: SuiteEntry, event: 'start' | 'skip' | 'fail', reason?: string) => void;
  /** How the lab placement is had: brings a lab up around `fn` (default: the lab module's withLab). */
  withLab?: <T>(shorthand: string, fn: (placement: Placement) => Promise<T>) => Promise<T>;
  /**
   * Aborting stops the suite: the entry running has both ends killed and reaped, it and the entries
   * not run are recorded as skipped with the reason, and runSuite resolves with what it had.
   */
  signal?: AbortSignal;
}

/** A lab made for one entry (`--lab SPEC` of a bench), taken down after it. */
async function defaultWithLab<T>(shorthand: string, fn: (placement: Placement) => Promise<T>): Promise<T> {
  const placement = await resolvePlacement('lab', { lab: shorthand });
  try {
    return await fn(placement);
  } finally {
    await placement.close?.();
  }
}

/**
 * Runs the suite: each entry through the runner, rows tagged with their scenario and placement, skips
 * and failures recorded with their reason (one failing scenario does not stop the others).
 */
export async function runSuite(opts: SuiteOptions = {}): Promise<ResultsDocument> {
  const started = new Date();
  const t0 = performance.now();
  const all = opts.entries ?? opts.seeds?.flatMap((s) => s.entries) ?? SUITE;
  for (const id of opts.only ?? []) {
    if (!all.some((e) => e.id === id)) {
      throw UsageError.invalid('only', id, `one of ${all.map((e) => e.id).join(', ')}`);
    }
  }
  const repeatAll = opts.repeat === undefined ? undefined : parseRepeat(opts.repeat);
  const entries = opts.only?.length ? all.filter((e) => opts.only?.includes(e.id)) : all;
  const full = opts.full ?? false;
  const rows: ResultRow[] = [];
  const skipped: { scenario: string; seed: SeedId; reason: string }[] = [];
  const ran: { id: string; command: string; seconds: number }[] = [];
  const skip = (e: SuiteEntry, reason: string, event: 'skip' | 'fail' = 'skip') => {
    skipped.push({ scenario: e.id, seed: e.seed, reason });
    opts.onEntry?.(e, event, reason);
  };

  // Load what can run, so that the progress total is known before the first run.
  const plan: { e: SuiteEntry; scenario: Scenario; params: Record<string, unknown>; repeat: number }[] = [];
  for (const e of entries) {
    const reason = skipReason(e, undefined, undefined, opts.yes);
    if (reason) {
      skip(e, reason);
      continue;
    }
    const scenario = (await loadScenario(e.scenario)) as Scenario;
    // options its scenario refuses are the suite's mistake: an error before anything runs, not a skip
    const params = entryParams(scenario, full ? e.full : e.quick);
    plan.push({ e, scenario, params, repeat: repeatAll ?? (full ? e.repeat.full : e.repeat.quick) });
  }
  const total = plan.reduce((n, p) => n + p.scenario.points(p.params).length * p.repeat, 0);
  let done = 0;

  for (const { e, scenario, params, repeat } of plan) {
    if (opts.signal?.aborted) {
      skip(e, `not run: ${stopReason(opts.signal.reason)}`);
      continue;
    }
    opts.onEntry?.(e, 'start');
    const t = performance.now();
    const timeoutSeconds =
      scenario.timeoutSeconds?.(params) ?? checkOption('timeout', OPTIONS.timeout.default) / 1000;
    const points = scenario.points(params).length * repeat;
    const run = (placement: Placement) =>
      measure(
        { scenario, params, repeat, timeoutSeconds, expects: [] },
        placement,
        (p) => opts.onProgress?.({ ...p, done: done + p.done, total, entry: e.id }),
        opts.signal,
      );
    try {
      const results =
        e.placement === 'lab'
          ? await (opts.withLab ?? defaultWithLab)(e.lab ?? '', async (pl) => ({ pl, r: await run(pl) }))
          : await resolvePlacement(e.placement).then(async (pl) => ({ pl, r: await run(pl) }));
      const described = results.pl.describe();
      for (const row of results.r.rows) {
        // The placement's numbers (the lab's rttUs, bitsPerSecond …) as placementRttUs, … on each row.
        for (const [k, v] of Object.entries(described)) {
          if (typeof v === 'number') row[`placement${k[0].toUpperCase()}${k.slice(1)}`] = v;
        }
        rows.push(row);
      }
      ran.push({
        id: e.id,
        command: entryCommand(e, full, repeat),
        seconds: round((performance.now() - t) / 1000),
      });
    } catch (err) {
      if (opts.signal?.aborted) {
        // stopped: what ran is kept, this entry and the rest are said not to have run
        skip(e, stopReason(opts.signal.reason), 'fail');
      } else if (err instanceof RunFailure || err instanceof EnvironmentError) {
        skip(e, `${err instanceof RunFailure ? 'failed' : 'refused'}: ${firstLine(err.message)}`, 'fail');
      } else throw err;
    }
    done += points;
  }

  const doc = resultsDocument('bench', { suite: full ? 'full' : 'quick', entries: ran }, rows, {
    startedAt: started.toISOString(),
    seconds: round((performance.now() - t0) / 1000),
  });
  const withSkips: ResultsDocument = { ...doc, skipped };
  return { ...withSkips, verdicts: verdicts(checkResults(withSkips, 'suite results'), opts.seeds) };
}

const round = (s: number) => Math.round(s * 10) / 10;
const stopReason = (reason: unknown) =>
  `interrupted${typeof reason === 'string' ? ` by ${reason}` : reason instanceof Error ? `: ${reason.message}` : ''}`;
const firstLine = (s: string) => s.split('\n')[0];
