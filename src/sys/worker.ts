// Starts a worker thread from a module, both from dist/ (the built .js) and from src/ under tsx
// (tests): Node 20 does not run a worker's entry through the --import hooks, so for a .ts entry the
// worker first registers tsx itself, then imports the module. A worker does not inherit the
// application's flags (execArgv: []): some that a process takes, a worker refuses
// (`node --input-type=module …` made the UDP reader fail).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `base`: the module's URL without its extension, e.g. `new URL('./reader-worker', import.meta.url)`. */
export function spawnWorker(base: URL, options: WorkerOptions): Worker {
  const js = new URL(`${base.href}.js`);
  const opts: WorkerOptions = { execArgv: [], ...options };
  if (existsSync(fileURLToPath(js))) return new Worker(js, opts);
  const ts = new URL(`${base.href}.ts`);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(ts.href)}); });`;
  return new Worker(code, { ...opts, eval: true });
}
