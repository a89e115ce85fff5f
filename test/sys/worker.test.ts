// spawnWorker from the sources (a .ts module through tsx) and from dist/ (a .js module as it is, also
// from a process started with flags a worker refuses).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { SockbufError } from '../../src/sys/sockbuf-error.js';
import { SysError } from '../../src/sys/sys-error.js';
import {
  failureMessage,
  spawnWorker,
  type WorkerFailureMessage,
  workerFailure,
} from '../../src/sys/worker.js';

const body = (ts: boolean) =>
  `import { parentPort, workerData } from 'node:worker_threads';\n` +
  `const n${ts ? ': number' : ''} = workerData.n;\n` +
  `parentPort.postMessage(n * 2);\n`;

const dir = mkdtempSync(join(tmpdir(), 'sockbuf-worker-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
writeFileSync(join(dir, 'mod.js'), body(false));
writeFileSync(join(dir, 'mod.ts'), body(true));

const DIST = new URL('../../dist/sys/worker.js', import.meta.url);

test('from the sources, spawnWorker runs the .ts module through tsx', async () => {
  const w = spawnWorker(pathToFileURL(join(dir, 'mod')), { workerData: { n: 5 } });
  const [answer] = await once(w, 'message');
  assert.equal(answer, 10);
  await w.terminate();
});

test("from dist/, the .js module runs, and the worker does not inherit the application's flags (node --input-type=module -e)", {
  skip: existsSync(DIST) ? false : 'dist/ not built (npm run build)',
}, () => {
  const code = `
    import { spawnWorker } from ${JSON.stringify(DIST.href)};
    const w = spawnWorker(new URL(${JSON.stringify(pathToFileURL(join(dir, 'mod')).href)}), { workerData: { n: 4 } });
    w.on('error', (e) => { console.log('error', e.code, e.message); process.exit(1); });
    w.on('message', (m) => { console.log(m); w.terminate(); });
  `;
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(c.stdout.trim(), '8', c.stdout + c.stderr);
  assert.equal(c.status, 0);
});

// a thread's failure reaches the caller as a SysError with its errno (issue 38), not as a string
const SYS_ERROR = new URL('../../src/sys/sys-error.ts', import.meta.url).href;
writeFileSync(
  join(dir, 'fails.ts'),
  `import { SysError } from ${JSON.stringify(SYS_ERROR)};\n` +
    `import { parentPort, workerData } from 'node:worker_threads';\n` +
    `const err = new SysError('ppoll', 9);\n` +
    `if (workerData.post) parentPort?.postMessage(failureOf(err));\nelse throw err;\n` +
    `function failureOf(e: SysError) { return { error: e.message, errno: e.errno, syscall: e.syscall }; }\n`,
);

test("a worker's failure, thrown or posted, becomes a SysError with its errno; without one, ERR_SOCKBUF_WORKER", async () => {
  const thrown = spawnWorker(pathToFileURL(join(dir, 'fails')), { workerData: { post: false } });
  const [e] = (await once(thrown, 'error')) as [Error];
  const a = workerFailure('delay line thread', e);
  assert.ok(a instanceof SysError, a.constructor.name);
  assert.deepEqual([a.code, a.errno, a.syscall], ['EBADF', 9, 'ppoll']);
  assert.match(a.message, /ppoll \(delay line thread\) failed: EBADF/);

  const posted = spawnWorker(pathToFileURL(join(dir, 'fails')), { workerData: { post: true } });
  const [m] = (await once(posted, 'message')) as [WorkerFailureMessage];
  await posted.terminate();
  const b = workerFailure('127.0.0.1:5000: UDP reader stopped', m);
  assert.deepEqual([b instanceof SysError, b.code, b.errno], [true, 'EBADF', 9]);

  const c = workerFailure('127.0.0.1:5000', {
    error: 'UDP reader thread ended (exit code 1) before it was stopped',
  });
  assert.ok(c instanceof SockbufError && !(c instanceof SysError));
  assert.equal(c.code, 'ERR_SOCKBUF_WORKER');
  assert.equal(c.message, '127.0.0.1:5000: UDP reader thread ended (exit code 1) before it was stopped');
  assert.deepEqual(failureMessage(new SysError('epoll_wait', 4)), {
    error: 'epoll_wait failed: EINTR',
    errno: 4,
    syscall: 'epoll_wait',
  });
});
