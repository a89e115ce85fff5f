// `sockbuf bench <scenario> [options]`: the scenario's options plus the common ones, then the runner.
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { benchRow, resultsDocument } from '../bench/document.js';
import { describeVerdict, evaluate, parseExpect } from '../bench/expect.js';
import { type OptionSpec, optionValues } from '../bench/options.js';
import { renderJson, renderTable } from '../bench/output.js';
import {
  PLACEMENT_NAMES,
  type PlacementName,
  placementOptions,
  resolvePlacement,
} from '../bench/placement.js';
import { progressReporter } from '../bench/progress.js';
import { loadScenario, loadScenarios } from '../bench/registry.js';
import { renderHtml } from '../bench/report/html.js';
import { DEFAULT_TIMEOUT_SECONDS, runBench } from '../bench/runner.js';
import type { Scenario } from '../bench/scenario.js';
import { formatTable } from '../bench/table.js';
import { labFromEnv } from '../lab/lab.js';
import { parseLabShorthand } from '../lab/spec.js';
import { parseCount, parseDuration, UsageError } from '../policy/units.js';
import { runSuiteCli, suiteCommand } from './suite.js';

/** Declared options (a scenario's, a placement's) as commander options; the library parses the values. */
function addOptions(cmd: Command, specs: OptionSpec[]): Command {
  for (const s of specs) cmd.option(s.flags, s.description, s.default);
  return cmd;
}

function addCommonOptions(cmd: Command): Command {
  cmd
    .option('--repeat <n>', 'runs of each point; the table shows medians', '3')
    .option('--json', 'print the sockbuf.v1 results document on stdout instead of the table')
    .option('--out <file>', 'also write the results document to FILE')
    .option('--html <file>', 'also write the HTML report (tables, charts beside the seeds) to FILE')
    .option(
      '--expect <expr>',
      "a figure to reach, e.g. 'adaptive/data >= 1.3' (repeatable; unmet: exit 1)",
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .addOption(
      new Option('--placement <where>', 'where the two ends run')
        .choices([...PLACEMENT_NAMES])
        .default('local'),
    )
    .option('--timeout <duration>', `per run (default: the scenario's, else ${DEFAULT_TIMEOUT_SECONDS}s)`);
  return addOptions(cmd, placementOptions());
}

async function overview(): Promise<string> {
  const scenarios = await loadScenarios();
  const list = scenarios.length
    ? formatTable(
        ['scenario', 'what it measures'],
        scenarios.map((s) => [s.name, s.description]),
      )
    : '(no built-in scenarios yet)';
  const common = addCommonOptions(new Command('x')).helpInformation().split('\n').slice(2).join('\n');
  const suite = suiteCommand().helpInformation().split('\n').slice(2).join('\n').trimEnd();
  return [
    'Usage: sockbuf bench <scenario> [options]',
    '       sockbuf bench [--full] [--only IDS]     the quick suite: every seed measured again',
    '',
    'Runs both ends of a benchmark as child processes, each point --repeat times, and reports medians.',
    '<scenario> is a built-in name or a path to a scenario module. `sockbuf bench <scenario> --help`',
    "shows the scenario's own options.",
    '',
    list,
    '',
    common.trimEnd(),
    '',
    'Without a scenario (the quick suite):',
    suite,
    '',
  ].join('\n');
}

async function benchScenario(scenario: Scenario, argv: string[]): Promise<void> {
  const cmd = addCommonOptions(new Command(`sockbuf bench ${scenario.name}`))
    .description(scenario.description)
    .exitOverride()
    .showHelpAfterError()
    .allowExcessArguments(false);
  const common = new Set(cmd.options.map((o) => o.attributeName()));
  if (typeof scenario.options === 'function') scenario.options(cmd as never);
  else addOptions(cmd, scenario.options ?? []);
  cmd.action(async (opts: Record<string, unknown>) => {
    const repeat = parseCount(String(opts.repeat), '--repeat', 1, 1000);
    const expects = ((opts.expect as string[] | undefined) ?? []).map(parseExpect);
    const own = Object.fromEntries(Object.entries(opts).filter(([k]) => !common.has(k)));
    const params = scenario.params(
      Array.isArray(scenario.options) ? optionValues(scenario.options, own) : own,
    );
    const timeoutSeconds =
      opts.timeout !== undefined
        ? parseDuration(String(opts.timeout), '--timeout')
        : (scenario.timeoutSeconds?.(params) ?? DEFAULT_TIMEOUT_SECONDS);
    if (!(timeoutSeconds > 0))
      throw new UsageError(`invalid value for --timeout: '${opts.timeout}' (must be > 0)`);
    // --lab implies the lab placement; under `sockbuf lab -- bench …` (SOCKBUF_LAB) it is the default.
    const chosen = cmd.getOptionValueSource('placement') !== 'default';
    if (opts.lab === undefined && !chosen && !labFromEnv() && scenario.defaultLab)
      opts.lab = scenario.defaultLab;
    if (opts.lab !== undefined) parseLabShorthand(String(opts.lab)); // exit 2 before anything starts
    if (opts.lab !== undefined && chosen && opts.placement !== 'lab')
      throw new UsageError(`--lab runs the ends in a lab: it cannot go with --placement ${opts.placement}`);
    // --remote HOST (without --placement) means the remote placement, also inside a lab's namespace
    const name =
      opts.remote !== undefined && !chosen && opts.lab === undefined
        ? 'remote'
        : opts.lab !== undefined || (!chosen && labFromEnv())
          ? 'lab'
          : (opts.placement as PlacementName);
    const placement = await resolvePlacement(name, opts);
    try {
      const startedAt = new Date();
      const progress = progressReporter();
      let results: Awaited<ReturnType<typeof runBench>>;
      try {
        results = await runBench(scenario, params, {
          placement,
          repeat,
          timeoutSeconds,
          onProgress: (p) => progress.update(p),
        });
      } finally {
        progress.stop();
      }

      const doc = resultsDocument(
        `bench ${scenario.name}`,
        {
          ...(params as Record<string, unknown>),
          scenario: scenario.name,
          placement: placement.describe(),
          repeat,
          timeoutSeconds,
          expect: expects.map((e) => e.text),
        },
        results.map((r) => benchRow(scenario.name, placement.name, r)),
        { startedAt: startedAt.toISOString(), seconds: (Date.now() - startedAt.getTime()) / 1000 },
      );
      if (opts.out) writeFileSync(String(opts.out), renderJson(doc));
      if (opts.html) writeFileSync(String(opts.html), renderHtml(doc));
      if (opts.json) process.stdout.write(renderJson(doc));
      else process.stdout.write(`${renderTable(results, scenario.columns)}\n`);

      const verdicts = expects.map((e) => evaluate(e, results, scenario.primary));
      const say = (line: string) => (opts.json ? process.stderr : process.stdout).write(`${line}\n`);
      for (const v of verdicts) for (const line of describeVerdict(v)) say(line);
      if (verdicts.some((v) => !v.ok)) process.exitCode = 1;
    } finally {
      await placement.close?.(); // a lab made by --lab
    }
  });
  await cmd.parseAsync(argv, { from: 'user' });
}

export function register(program: Command): void {
  program
    .command('bench')
    .description('run a benchmark scenario: both ends, repeats, medians (`sockbuf bench --help` lists them)')
    .usage('<scenario> [options]')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_opts: unknown, cmd: Command) => {
      const [name, ...rest] = cmd.args;
      if (name === '--help' || name === '-h') {
        process.stdout.write(await overview());
        return;
      }
      // No scenario: the quick suite (its options come first: `sockbuf bench --full`).
      if (name === undefined || name.startsWith('-')) return runSuiteCli(cmd.args);
      await benchScenario(await loadScenario(name), rest);
    });
}
