// Starts a worker thread from a module of this package, both from dist/ (the built .js) and from src/
// under tsx (tests): which one is decided once, in package.ts. Node 20 does not run a worker's entry
// through the --import hooks, so for a .ts entry the worker first registers tsx itself, then imports
// the module. A worker does not inherit the application's flags (execArgv: []): some that a process
// takes, a worker refuses (`node --input-type=module …` made the UDP reader fail).
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { FROM_SOURCE, moduleUrl } from './package.js';

/** `base`: the module's URL without its extension, e.g. `new URL('./reader.worker', import.meta.url)`. */
export function spawnWorker(base: URL, options: WorkerOptions): Worker {
  const url = moduleUrl(base);
  const opts: WorkerOptions = { execArgv: [], ...options };
  if (!FROM_SOURCE) return new Worker(url, opts);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(code, { ...opts, eval: true });
}
