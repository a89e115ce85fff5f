import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
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
