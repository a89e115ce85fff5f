// Regenerates docs/seeds.md: runs the quick suite (or, with --from FILE, reads a sockbuf-results.json
// it wrote) and writes, per seed, the command that measures it again and the table it measured here.
//   npm run docs:seeds                              # measure now (about 2–3 minutes)
//   npm run docs:seeds -- --from sockbuf-results.json [--note 'load average 2.1 on a shared machine']
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seedsMarkdown } from '../src/bench/report/markdown.js';
import { loadResults } from '../src/bench/report/results.js';
import { SEEDS } from '../src/bench/seeds/index.js';
import { runSuite } from '../src/bench/suite.js';

const at = process.argv.indexOf('--from');
const doc =
  at > 0
    ? loadResults([process.argv[at + 1]])[0]
    : await runSuite({
        onEntry: (e, ev, why) => process.stderr.write(`${ev} ${e.id}${why ? `: ${why}` : ''}\n`),
      });
const out = fileURLToPath(new URL('../docs/seeds.md', import.meta.url));
const noteAt = process.argv.indexOf('--note');
writeFileSync(out, seedsMarkdown(doc, SEEDS, noteAt > 0 ? process.argv[noteAt + 1] : undefined));
// the repository's formatter owns the tables' padding (npm test lints docs/ too)
execFileSync(
  fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url)),
  ['format', '--write', out],
  {
    stdio: 'ignore',
  },
);
process.stderr.write('wrote docs/seeds.md\n');
