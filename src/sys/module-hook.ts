// Maps a Node built-in module to a replacement for the application's code, both ways it can be asked
// for: require() (CommonJS: Module._load, a Node internal, as require-in-the-middle hooks it) and
// import (ES modules: a resolve hook registered with module.register). Modules under `ownRoot` (this
// package's own files) still get the built-in. Used by `sockbuf/dgram/register`.
import Module, { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { moduleUrl } from './package.js';

type Load = (request: string, parent: { filename?: string } | null | undefined, isMain: boolean) => unknown;

/** `names` ('dgram', 'node:dgram'): `replacement` for require(), the module at `replacementUrl` for import. */
export function redirectBuiltin(
  names: string[],
  replacement: object,
  replacementUrl: string,
  ownRoot: URL,
): void {
  const root = fileURLToPath(ownRoot);
  const wanted = new Set(names);
  const M = Module as unknown as { _load: Load };
  const load = M._load;
  M._load = function (this: unknown, request, parent, isMain) {
    if (wanted.has(request) && !parent?.filename?.startsWith(root)) return replacement;
    return load.call(this, request, parent, isMain);
  };
  register(moduleUrl(new URL('./module-loader.hooks', import.meta.url)), {
    data: { names, target: replacementUrl, root: ownRoot.href },
  });
}
