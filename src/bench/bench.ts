// One scenario, run as a program runs it: `await runBench('tcp', { options: { sizes: '16000' } })`.
// The scenario's options, where the ends run, the repeats, the results document and the expectations;
// `sockbuf bench NAME` is this plus printing, and the quick suite runs its entries through it too.

import { UsageError } from '../errors.js';
import { labFromEnv } from '../lab/registry.js';
import { parseLabShorthand } from '../lab/spec.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { parseServer } from '../serve/remote-end.js';
import { benchRow, resultsDocument } from './document.js';
import { type Expectation, evaluate, parseExpect, type Verdict } from './expect.js';
import { type OptionSpec, type OptionValues, optionSpecs, optionValues, parseOptionArgv } from './options.js';
import { type Placement, type PlacementName, resolvePlacement } from './placement.js';
import type { ResultRow, ResultsDocument } from './report/results.js';
import { type PointResult, type Progress, runPoints } from './runner.js';
import type { Scenario } from './scenario.js';
import { loadScenario } from './scenario-registry.js';

/** What runBench takes: the scenario's options, repeats, placement, expectations and a progress callback. */
export interface BenchOptions {
  /**
   * The scenario's own options by name (`{ sizes: '250,4000', findMax: true }`) or as its argv
   * (`['--sizes', '250,4000']`); the defaults for the rest.
   */
  options?: OptionValues | string[];
  /** Runs of each point, 1 to 1000 (default 3); the results are medians over them. */
  repeat?: number | string;
  /** Where the ends run (default `local`; `lab` under a lab or with `lab`; `remote` with `remote`). */
  placement?: PlacementName;
  /** Bring a lab up for this bench and take it down after: `rtt=2ms,bandwidth=5gbit`. */
  lab?: string;
  /** The far end's `sockbuf serve`, HOST[:PORT] (the token from SOCKBUF_TOKEN). */
  remote?: string;
  /** Per run: milliseconds, or a duration such as `'30s'` (default: the scenario's, else 60 s). */
  timeout?: number | string;
  /** Figures the results must reach, such as `adaptive/data >= 1.3` (see `check()`). */
  expect?: string[];
  /** Called as each run starts (and once all are done) with the runs done of the total. */
  onProgress?: (p: Progress) => void;
  /**
   * Aborting stops the run: both ends are killed and reaped, and runBench rejects (an Interrupted when
   * the reason is a signal's name, as the CLI aborts on SIGINT/SIGTERM).
   */
  signal?: AbortSignal;
}

/** What runBench resolves with: the scenario, its rows, the results document and the `--expect` check. */
export interface BenchOutcome {
  scenario: Scenario;
  /** The sockbuf.v1 results document (`--json`, `--out`). */
  document: ResultsDocument;
  /** One result per point, in the scenario's order: what the table shows. */
  results: PointResult[];
  /** The expectations checked against the medians; UsageError for a name that matches nothing. */
  check(): Verdict[];
}

/** A scenario with its options checked, ready to run wherever. */
export interface PreparedBench {
  scenario: Scenario;
  params: Record<string, unknown>;
  repeat: number;
  timeoutSeconds: number;
  expects: Expectation[];
}

/** The scenario's own options as data (the old `options(cmd)` form recorded into it). */
export function scenarioOptions(scenario: Scenario): OptionSpec[] {
  return optionSpecs(scenario.options);
}

/** The scenario's parameters from its options (by name or as argv), checked by the scenario. */
export function scenarioParams(
  scenario: Scenario,
  options: OptionValues | string[] = {},
): Record<string, unknown> {
  const specs = scenarioOptions(scenario);
  const given = Array.isArray(options) ? parseOptionArgv(specs, options) : options;
  return scenario.params(optionValues(specs, given)) as Record<string, unknown>;
}

/** Runs of each point, 1 to 1000: a number, or a string such as the CLI's `--repeat 3` (runBench, runSuite). */
export function parseRepeat(value: number | string): number {
  return checkWhole('repeat', value);
}

/** Checks everything but the placement, in the order the CLI always has (exit 2 before anything starts). */
export async function prepareBench(
  scenario: Scenario | string,
  opts: BenchOptions = {},
): Promise<PreparedBench> {
  const s = typeof scenario === 'string' ? await loadScenario(scenario) : scenario;
  const repeat = parseRepeat(opts.repeat ?? OPTIONS.repeat.default);
  const expects = (opts.expect ?? []).map(parseExpect);
  // the bench's own options are judged before the scenario's, whose checks may ask for more (--yes)
  const asked = opts.timeout === undefined ? undefined : checkOption('timeout', opts.timeout) / 1000;
  if (opts.lab !== undefined) parseLabShorthand(opts.lab);
  if (opts.remote !== undefined) parseServer(opts.remote, 'remote');
  const params = scenarioParams(s, opts.options);
  const timeoutSeconds =
    asked ?? s.timeoutSeconds?.(params as never) ?? checkOption('timeout', OPTIONS.timeout.default) / 1000;
  return { scenario: s, params, repeat, timeoutSeconds, expects };
}

/**
 * Where the ends run: `lab` with a lab spec (the scenario's default lab when nothing else is said)
 * or under a lab (SOCKBUF_LAB); `remote` with a server; else the placement named (default local).
 */
export async function benchPlacement(scenario: Scenario, opts: BenchOptions = {}): Promise<Placement> {
  const chosen = opts.placement !== undefined;
  const inLab = labFromEnv() !== undefined;
  const lab = opts.lab ?? (!chosen && !inLab ? scenario.defaultLab : undefined);
  if (lab !== undefined) parseLabShorthand(lab); // exit 2 before anything starts
  if (lab !== undefined && chosen && opts.placement !== 'lab')
    throw new UsageError(`--lab runs the ends in a lab: it cannot go with --placement ${opts.placement}`);
  // --remote HOST (without --placement) means the remote placement, also inside a lab's namespace
  const name: PlacementName =
    opts.remote !== undefined && !chosen && lab === undefined
      ? 'remote'
      : lab !== undefined || (!chosen && inLab)
        ? 'lab'
        : (opts.placement ?? 'local');
  return resolvePlacement(name, { lab, remote: opts.remote });
}

/** Runs a prepared bench on a placement: the per-point results and the document's rows. */
export async function measure(
  b: PreparedBench,
  placement: Placement,
  onProgress?: (p: Progress) => void,
  signal?: AbortSignal,
): Promise<{ results: PointResult[]; rows: ResultRow[] }> {
  const results = await runPoints(b.scenario, b.params, {
    placement,
    repeat: b.repeat,
    timeoutSeconds: b.timeoutSeconds,
    onProgress,
    signal,
  });
  return { results, rows: results.map((r) => benchRow(b.scenario.name, placement.name, r)) };
}

/**
 * Runs a scenario (built-in name, path to a scenario module, or a Scenario): every point `repeat`
 * times, both ends as child processes where the placement says. UsageError (exit 2) for bad options,
 * EnvironmentError (exit 3) when the placement cannot be had, RunFailure when a run fails.
 */
export async function runBench(scenario: Scenario | string, opts: BenchOptions = {}): Promise<BenchOutcome> {
  const b = await prepareBench(scenario, opts);
  const placement = await benchPlacement(b.scenario, opts);
  try {
    const startedAt = new Date();
    const { results, rows } = await measure(b, placement, opts.onProgress, opts.signal);
    const document = resultsDocument(
      `bench ${b.scenario.name}`,
      {
        ...b.params,
        scenario: b.scenario.name,
        placement: placement.describe(),
        repeat: b.repeat,
        timeoutSeconds: b.timeoutSeconds,
        expect: b.expects.map((e) => e.text),
      },
      rows,
      { startedAt: startedAt.toISOString(), seconds: (Date.now() - startedAt.getTime()) / 1000 },
    );
    const check = () => b.expects.map((e) => evaluate(e, results, b.scenario.primary));
    return { scenario: b.scenario, document, results, check };
  } finally {
    await placement.close?.(); // a lab made for this bench
  }
}
