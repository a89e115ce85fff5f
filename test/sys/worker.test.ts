import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnWorker } from '../../src/sys/worker.js';

const body = (ts: boolean) =>
  `import { parentPort, workerData } from 'node:worker_threads';\n` +
  `const n${ts ? ': number' : ''} = workerData.n;\n` +
  `parentPort.postMessage(n * 2);\n`;

test('spawnWorker runs a built .js module, and a .ts one through tsx when no .js is there', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-worker-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'built.js'), body(false));
    writeFileSync(join(dir, 'source.ts'), body(true));
    for (const [name, n] of [
      ['built', 21],
      ['source', 5],
    ] as const) {
      const w = spawnWorker(pathToFileURL(join(dir, name)), { workerData: { n } });
      const [answer] = await once(w, 'message');
      assert.equal(answer, n * 2, name);
      await w.terminate();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a worker does not inherit the application's flags (node --input-type=module -e, a .js entry)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-worker-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'hello.js'), body(false));
    const code = `
      import { spawnWorker } from ${JSON.stringify(fileURLToPath(new URL('../../src/sys/worker.ts', import.meta.url)))};
      const w = spawnWorker(new URL(${JSON.stringify(pathToFileURL(join(dir, 'hello')).href)}), { workerData: { n: 4 } });
      w.on('error', (e) => { console.log('error', e.code); process.exit(1); });
      w.on('message', (m) => { console.log(m); w.terminate(); });
    `;
    const c = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    assert.equal(c.stdout.trim(), '8', c.stdout + c.stderr);
    assert.equal(c.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
