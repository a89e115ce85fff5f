// `sockbuf report FILE… [--html OUT] [--json]`: saved sockbuf.v1 results as the seed-style tables and
// verdicts on stdout, or as one self-contained HTML page. Several files are merged, each row, table and
// verdict naming its file. Thin: the work is in src/bench/report.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { renderJson } from '../bench/output.js';
import { renderHtml, reportText } from '../bench/pages.js';
import { loadResults } from '../bench/report/results.js';
import { mergeResults } from '../bench/report/sources.js';
import { UsageError } from '../errors.js';
import { printable } from '../policy/printable.js';
import { outputFileProblem } from './lines.js';

export function register(program: Command): void {
  program
    .command('report')
    .description('show saved results (sockbuf.v1 JSON) as tables, or render them to one HTML page')
    .argument('<files...>', 'results files written by `sockbuf bench --out FILE`')
    .option('--html <file>', 'write a self-contained HTML report (tables and charts) to FILE')
    .option('--json', 'print the (merged) results document instead of tables')
    .action((files: string[], opts: { html?: string; json?: boolean }) => {
      // a folder that is not there is bad usage naming --html, before anything is read
      const problem = opts.html === undefined ? undefined : outputFileProblem(opts.html, '--html');
      if (problem) throw new UsageError(problem, 'html');
      const doc = mergeResults(loadResults(files), files);
      if (opts.html) {
        writeFileSync(opts.html, renderHtml(doc));
        process.stderr.write(`sockbuf: wrote ${printable(opts.html)}\n`);
      }
      if (opts.json) process.stdout.write(renderJson(doc));
      else if (!opts.html) process.stdout.write(`${reportText(doc)}\n`);
    });
}
