// Starts a worker thread from a sibling module, both from dist/ (the built .js) and from src/ under
// tsx (tests): Node 20 does not run a worker's entry through the --import hooks, so for a .ts entry
// the worker first registers tsx itself, then imports the module.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function spawnWorker(name: string, options: WorkerOptions): Worker {
  const js = new URL(`./${name}.js`, import.meta.url);
  if (existsSync(fileURLToPath(js))) return new Worker(js, options);
  const ts = new URL(`./${name}.ts`, import.meta.url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(ts.href)}); });`;
  return new Worker(code, { ...options, eval: true });
}
