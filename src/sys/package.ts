// Where this package's own files are, decided once: from dist/ (the built .js) or from src/ under
// tsx (tests and `npm run` scripts). Every path that tsc does not check goes through here: the CLI
// entry, modules run as processes or worker threads, and package.json for the version.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** True when this code runs from src/ (a .ts file under tsx), false from dist/. */
export const FROM_SOURCE = fileURLToPath(import.meta.url).endsWith('.ts');

/** The extension of this package's modules as they run now: '.ts' from src/, '.js' from dist/. */
export const MODULE_EXT = FROM_SOURCE ? '.ts' : '.js';

/** A module's URL from its URL without extension: `moduleUrl(new URL('./link-probe.child', import.meta.url))`. */
export function moduleUrl(base: URL): URL {
  return new URL(`${base.href}${MODULE_EXT}`);
}

/** The same as a file path. */
export function moduleFile(base: URL): string {
  return fileURLToPath(moduleUrl(base));
}

/** The `sockbuf` CLI entry: dist/cli/main.js, or src/cli/main.ts from the sources. */
export function sockbufEntry(): string {
  return moduleFile(new URL('../cli/main', import.meta.url));
}

/** sockbuf's version, from package.json (two levels up from both src/sys and dist/sys). */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string })
  .version;

/** The schema every sockbuf document (bench results, doctor --json) names: docs/results-schema.json. */
export const SCHEMA = 'sockbuf.v1';
