// Issue 45's "no abort, ever": RUNS sockbuf/dgram processes of each of four endings (natural end,
// process.exit() from a SIGTERM handler, SIGTERM with no handler, process.exit() during traffic),
// under the preload and with a plain import (scripts/lib/dgram-exit.ts), PARALLEL at a time; prints
// the aborts (exit 134 / FATAL ERROR) and other unexpected endings of each; exit 1 if there is any.
// test/scripts/dgram-exit.test.ts runs 50 of each; the full count (docs/dgram.md):
//   npm run build && flock /tmp/sockbuf-heavy.lock node --import tsx scripts/dgram-exit.ts --runs 500
import { parseArgs } from 'node:util';
import { runExits } from './lib/dgram-exit.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '500' }, parallel: { type: 'string', default: '4' } },
});
const runs = Number(values.runs);
const parallel = Number(values.parallel);
if (!Number.isInteger(runs) || runs < 1 || runs > 100_000)
  throw new Error(`--runs: expected an integer from 1 to 100000, got '${values.runs}'`);
if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64)
  throw new Error(`--parallel: expected an integer from 1 to 64, got '${values.parallel}'`);

const t0 = performance.now();
const outcomes = await runExits({ runs, parallel });
const seconds = (performance.now() - t0) / 1000;
console.log('| mode    | ending   | runs | aborts | other unexpected |');
console.log('| ------- | -------- | ---- | ------ | ---------------- |');
for (const o of outcomes)
  console.log(
    `| ${o.mode.padEnd(7)} | ${o.kind.padEnd(8)} | ${String(o.runs).padStart(4)} | ${String(o.aborts).padStart(6)} | ${String(o.unexpected).padStart(16)} |`,
  );
const aborts = outcomes.reduce((a, o) => a + o.aborts, 0);
const unexpected = outcomes.reduce((a, o) => a + o.unexpected, 0);
console.log(
  `${outcomes.reduce((a, o) => a + o.runs, 0)} processes in ${seconds.toFixed(0)} s (${parallel} at a time): ${aborts} aborts, ${unexpected} other unexpected endings`,
);
for (const o of outcomes) for (const s of o.samples) console.log(`\n${o.mode} ${o.kind}: ${s}`);
process.exitCode = aborts + unexpected > 0 ? 1 : 0;
