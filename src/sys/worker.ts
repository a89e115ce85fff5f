// Starts a worker thread from a module of this package, both from dist/ (the built .js) and from src/
// under tsx (tests): which one is decided once, in package.ts. Node 20 does not run a worker's entry
// through the --import hooks, so for a .ts entry the worker first registers tsx itself, then imports
// the module. A worker does not inherit the application's flags (execArgv: []): some that a process
// takes, a worker refuses (`node --input-type=module …` made the UDP reader fail).
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { FROM_SOURCE, moduleUrl } from './package.js';
import { SockbufError } from './sockbuf-error.js';
import { SysError } from './sys-error.js';

/** `base`: the module's URL without its extension, e.g. `new URL('./reader.worker', import.meta.url)`. */
export function spawnWorker(base: URL, options: WorkerOptions): Worker {
  const url = moduleUrl(base);
  const opts: WorkerOptions = { execArgv: [], ...options };
  if (!FROM_SOURCE) return new Worker(url, opts);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(code, { ...opts, eval: true });
}

/** What a worker thread posts when its loop fails: the message, and the errno and call where a call failed. */
export interface WorkerFailureMessage {
  error: string;
  errno?: number;
  syscall?: string;
}

/** The message a worker posts for `err` (a SysError's errno and call kept). */
export function failureMessage(err: unknown): WorkerFailureMessage {
  const e = err as { message?: unknown; errno?: unknown; syscall?: unknown };
  return {
    error: typeof e?.message === 'string' ? e.message : String(err),
    ...(typeof e?.errno === 'number' ? { errno: Math.abs(e.errno) } : {}),
    ...(typeof e?.syscall === 'string' ? { syscall: e.syscall } : {}),
  };
}

/**
 * A worker thread's failure as it reaches the caller: a SysError with its errno when a system call
 * failed (`what` says whose: `127.0.0.1:5000: UDP reader stopped`), else ERR_SOCKBUF_WORKER with the
 * thread's message. `failure` is a WorkerFailureMessage or the Error of the worker's 'error' event.
 */
export function workerFailure(what: string, failure: WorkerFailureMessage | Error): SockbufError {
  const m = failure instanceof Error ? failureMessage(failure) : failure;
  if (m.errno !== undefined && m.errno > 0) return new SysError(m.syscall ?? 'worker', m.errno, what);
  return new SockbufError(`${what}: ${m.error}`, 'ERR_SOCKBUF_WORKER', {
    cause: failure instanceof Error ? failure : undefined,
  });
}
