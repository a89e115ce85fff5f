// Replaces a Node built-in module's exports for the whole process (`sockbuf/dgram/register` does so
// for node:dgram). The built-in's own exports object is patched, and syncBuiltinESMExports() carries
// that to its ES module face, so require('dgram'), require('node:dgram') and `import … from
// 'node:dgram'` (default or named, before or after) all give the replacement. No loader hooks:
// module.register() starts Node's loader thread, which cost every preloaded process ~12 MiB of peak
// RSS and ~0.1 s (issue 45). sockbuf's own modules keep the built-in through builtinOriginal().
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const originals = new Map<string, Record<string, unknown>>();

/** The built-in `name` ('dgram') gives `replacement`'s exports from now on, everywhere in the process. */
export function replaceBuiltin(name: string, replacement: Record<string, unknown>): void {
  const builtin = require(`node:${name}`) as Record<string, unknown>;
  if (!originals.has(name)) originals.set(name, { ...builtin });
  Object.assign(builtin, replacement);
  syncBuiltinESMExports();
}

/** The built-in `name` as Node made it, replaced or not (sockbuf/dgram reads through node:dgram's socket). */
export function builtinOriginal<T>(name: string): T {
  return (originals.get(name) ?? require(`node:${name}`)) as T;
}
