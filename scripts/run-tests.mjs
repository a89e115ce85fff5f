#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's test runner (through tsx), so the summary line is node's.
// Node 20's --test does not glob .ts files itself. Pass file or folder names to run a subset.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) collect(join(path, name), out);
  } else if (path.endsWith('.test.ts')) {
    out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length ? roots : ['test']).flatMap((r) => collect(r, []));
const concurrency = process.env.SOCKBUF_TEST_CONCURRENCY ?? '1';
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
