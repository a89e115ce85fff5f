// `sockbuf bench <scenario> [options]`: the scenario's options plus the common ones, then the runner.
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { type BenchOutcome, runBench, scenarioOptions } from '../bench/bench.js';
import { describeVerdict } from '../bench/expect.js';
import type { OptionSpec } from '../bench/options.js';
import { renderJson, renderTable } from '../bench/output.js';
import { renderHtml } from '../bench/pages.js';
import { PLACEMENT_NAMES, type PlacementName, placementOptions } from '../bench/placement.js';
import { Interrupted } from '../bench/runner.js';
import type { Scenario } from '../bench/scenario.js';
import { loadScenario, loadScenarios } from '../bench/scenario-registry.js';
import { UsageError } from '../errors.js';
import { formatTable } from '../policy/table.js';
import { declared } from './declared.js';
import { outputFileProblem, printableText } from './lines.js';
import { optionRefused } from './os-errors.js';
import { progressReporter } from './progress.js';
import { stopSignals } from './signals.js';
import { runSuiteCli, suiteCommand } from './suite.js';
import { usageCommand } from './usage.js';

/** Declared options (a scenario's, a placement's) as commander options; the library parses the values. */
function addOptions(cmd: Command, specs: OptionSpec[]): Command {
  for (const s of specs) cmd.option(s.flags, s.description, s.default);
  return cmd;
}

function addCommonOptions(cmd: Command): Command {
  cmd
    .addOption(declared('repeat'))
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
    .addOption(declared('timeout', undefined, true));
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

/** `sockbuf bench SCENARIO`'s own command: the common options, then the scenario's. */
export function scenarioCommand(scenario: Scenario): { cmd: Command; common: Set<string> } {
  const cmd = addCommonOptions(usageCommand(`sockbuf bench ${scenario.name}`))
    .description(scenario.description)
    .exitOverride()
    .allowExcessArguments(false);
  const common = new Set(cmd.options.map((o) => o.attributeName()));
  return { cmd: addOptions(cmd, scenarioOptions(scenario)), common };
}

async function benchScenario(scenario: Scenario, argv: string[]): Promise<void> {
  const { cmd, common } = scenarioCommand(scenario);
  cmd.action(async (opts: Record<string, unknown>) => {
    for (const o of ['out', 'html'] as const) {
      const problem = opts[o] === undefined ? undefined : outputFileProblem(String(opts[o]), `--${o}`);
      if (problem) throw new UsageError(problem);
    }
    const progress = progressReporter();
    // the first SIGINT/SIGTERM kills and reaps both ends; the run then rejects (Interrupted: 130/143)
    const signals = stopSignals();
    let outcome: BenchOutcome;
    try {
      outcome = await runBench(scenario, {
        options: Object.fromEntries(Object.entries(opts).filter(([k]) => !common.has(k))),
        repeat: Number(opts.repeat),
        expect: opts.expect as string[] | undefined,
        timeout: opts.timeout as number | undefined,
        // the default placement is the library's to choose (a lab around it, --lab, --remote)
        placement:
          cmd.getOptionValueSource('placement') === 'default' ? undefined : (opts.placement as PlacementName),
        lab: opts.lab === undefined ? undefined : String(opts.lab),
        remote: opts.remote === undefined ? undefined : String(opts.remote),
        onProgress: (p) => progress.update(p),
        signal: signals.signal,
      });
    } catch (err) {
      progress.stop();
      // stopped by a signal: the points that had runs, as the table would show them
      if (err instanceof Interrupted && err.results?.length)
        process.stdout.write(`${printableText(renderTable(err.results, scenario.columns))}\n`);
      throw err;
    } finally {
      progress.stop();
      signals.dispose();
    }
    const { document: doc, results } = outcome;
    if (opts.out) writeFileSync(String(opts.out), renderJson(doc));
    if (opts.html) writeFileSync(String(opts.html), renderHtml(doc));
    if (opts.json) process.stdout.write(renderJson(doc));
    else process.stdout.write(`${printableText(renderTable(results, scenario.columns))}\n`);

    const verdicts = outcome.check();
    const say = (line: string) =>
      (opts.json ? process.stderr : process.stdout).write(`${printableText(line)}\n`);
    for (const v of verdicts) for (const line of describeVerdict(v)) say(line);
    if (verdicts.some((v) => !v.ok)) process.exitCode = 1;
  });
  try {
    await cmd.parseAsync(argv, { from: 'user' });
  } catch (err) {
    // a scenario's own command: the program's handler does not see its options (--remote)
    throw optionRefused(cmd, err) ?? err;
  }
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
