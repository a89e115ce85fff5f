// How a test runs the sockbuf CLI: the built dist/cli/main.js when it is at least as new as every file
// in src (npm test builds before it tests), else src/cli/main.ts through tsx. Under load, tsx costs
// ~4 s per spawn on this machine against ~1.5 s for dist.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'dist', 'cli', 'main.js');
const SRC = join(ROOT, 'src', 'cli', 'main.ts');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function distIsFresh(): boolean {
  try {
    return statSync(DIST).mtimeMs >= newest(join(ROOT, 'src'));
  } catch {
    return false;
  }
}

/** Node arguments that start the CLI: pass them to spawn(process.execPath, [...SOCKBUF_ARGV, ...args]). */
export const SOCKBUF_ARGV: readonly string[] = distIsFresh() ? [DIST] : ['--import', 'tsx', SRC];
