// `sockbuf bench` with no scenario: the quick suite (src/bench/suite.ts). Parses, runs, prints the
// seed-style tables and verdicts, and writes sockbuf-results.json and sockbuf-report.html. Thin.
import { writeFileSync } from 'node:fs';
import { renderJson } from '../bench/output.js';
import { renderHtml, reportText } from '../bench/pages.js';
import { checkResults } from '../bench/report/results.js';
import { suiteExitCode } from '../bench/seeds/index.js';
import { runSuite, SUITE } from '../bench/suite.js';
import { UsageError } from '../errors.js';
import { parseList } from '../policy/units.js';
import { declared } from './declared.js';
import { outputFileProblem, printableText } from './lines.js';
import { progressReporter } from './progress.js';
import { stopSignals } from './signals.js';
import { type UsageCommand, usageCommand } from './usage.js';

export function suiteCommand(): UsageCommand {
  return (
    usageCommand('sockbuf bench')
      .description(
        'the quick suite: every seed measured again (drain, tcp, ping, udp loss ladder with find-max, ' +
          'streamer, GSO/GRO, and seed 000 across the lab when root)',
      )
      .option('--full', 'the long versions (the scenarios’ own durations, more repeats)')
      .option('--yes', "include what changes host sysctls (seed 000's rmem_max sweep; restored afterwards)")
      // no default: each entry has its own
      .addOption(
        declared('repeat', "repeats of every entry (instead of each entry's own)").default(undefined),
      )
      .option('--only <ids>', `run only these entries (${SUITE.map((e) => e.id).join(', ')})`)
      .option('--json', 'print the results document on stdout instead of the tables')
      .option('--out <file>', 'where to write the results document', 'sockbuf-results.json')
      .option('--html <file>', 'where to write the HTML report', 'sockbuf-report.html')
      .exitOverride()
      .allowExcessArguments(false)
  );
}

export async function runSuiteCli(argv: string[]): Promise<void> {
  const cmd = suiteCommand();
  cmd.action(
    async (opts: {
      full?: boolean;
      yes?: boolean;
      only?: string;
      repeat?: number;
      json?: boolean;
      out: string;
      html: string;
    }) => {
      // '' is not "everything": it names no entry
      const only = opts.only !== undefined ? parseList(opts.only, '--only', (v) => v) : undefined;
      const problem = outputFileProblem(opts.out, '--out') ?? outputFileProblem(opts.html, '--html');
      if (problem) throw new UsageError(problem);
      const progress = progressReporter();
      const say = (line: string) => {
        progress.stop();
        process.stderr.write(`${printableText(line)}\n`);
      };
      // the first SIGINT/SIGTERM stops the entry running; the suite reports what it had (exit 130/143)
      const signals = stopSignals();
      let doc: Awaited<ReturnType<typeof runSuite>>;
      try {
        doc = await runSuite({
          full: opts.full,
          yes: opts.yes,
          only,
          repeat: opts.repeat,
          onEntry: (e, event, reason) => {
            if (event !== 'start')
              say(`sockbuf: ${event === 'skip' ? 'skipped' : 'failed'} ${e.id}: ${reason}`);
          },
          onProgress: (p) =>
            progress.update({
              ...p,
              next: p.next && { point: `${p.entry} ${p.next.point}`, repeat: p.next.repeat },
            }),
          signal: signals.signal,
        });
      } finally {
        progress.stop();
        signals.dispose();
      }
      writeFileSync(opts.out, renderJson(doc));
      writeFileSync(opts.html, renderHtml(doc));
      if (opts.json) process.stdout.write(renderJson(doc));
      else process.stdout.write(`${reportText(checkResults(doc, 'suite results'))}\n\n`);
      process.stderr.write(`sockbuf: suite took ${doc.seconds} s; wrote ${opts.out} and ${opts.html}\n`);
      // a seed measured and not reproduced fails the suite; skipped seeds do not count
      process.exitCode = suiteExitCode(doc);
    },
  );
  await cmd.parseAsync(argv, { from: 'user' });
}
