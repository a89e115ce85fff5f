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
import { spawnWorker } from '../../src/sys/worker.js';

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
