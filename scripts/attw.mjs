#!/usr/bin/env node
// @arethetypeswrong/cli over the packed package (npm pack without the build: run `npm run build` first).
// Profile esm-only: sockbuf is ESM only, and CommonJS loads it through Node's require(esm) (engines
// >= 20.19, test/package.test.ts); a second, CommonJS build would give a process two copies of the
// module state that must be one (sockbuf/dgram's single reader thread, the metrics registry).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = mkdtempSync(join(tmpdir(), 'sockbuf-attw-'));
try {
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    encoding: 'utf8',
  });
  const file = join(dir, JSON.parse(out)[0].filename);
  const attw = fileURLToPath(new URL('../node_modules/.bin/attw', import.meta.url));
  execFileSync(attw, [file, '--profile', 'esm-only'], { stdio: 'inherit' });
} catch (e) {
  process.exitCode = 1;
  // attw's own report is already on the terminal; anything else (no npm, no attw) is said here
  if (!(e && typeof e === 'object' && typeof e.status === 'number')) throw e;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
