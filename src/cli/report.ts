// `sockbuf report FILE… [--html OUT] [--json]`: saved sockbuf.v1 results as the seed-style tables and
// verdicts on stdout, or as one self-contained HTML page. Thin: the work is in src/bench/report.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadResults, mergeResults, renderHtml, reportText } from '../tools.js';

export function register(program: Command): void {
  program
    .command('report')
    .description('show saved results (sockbuf.v1 JSON) as tables, or render them to one HTML page')
    .argument('<files...>', 'results files written by `sockbuf bench --out FILE`')
    .option('--html <file>', 'write a self-contained HTML report (tables and charts) to FILE')
    .option('--json', 'print the (merged) results document instead of tables')
    .action((files: string[], opts: { html?: string; json?: boolean }) => {
      const docs = loadResults(files);
      const doc = mergeResults(docs);
      if (opts.html) {
        writeFileSync(opts.html, renderHtml(doc));
        process.stderr.write(`sockbuf: wrote ${opts.html}\n`);
      }
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
      } else if (!opts.html) {
        process.stdout.write(`${reportText(doc)}\n`);
      }
    });
}
