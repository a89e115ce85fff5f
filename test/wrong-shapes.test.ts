// Options checked at run time: test/fixtures/plain-js/wrong-shapes.mjs, a plain-JavaScript program,
// imports `sockbuf` (this package, through its exports: dist) and hands every exported function
// arguments of the wrong shape ({}, wrong types, an rinfo where { host, port } is taken, a missing
// callback). Each must be refused with a SockbufError naming the option, never a raw TypeError, a
// hang or a success; a function exported later fails this test until the table covers it.
// npm test builds first. Before this check (main at 0fea8a1) 135 of its 165 calls were wrong.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

test('every function exported from sockbuf refuses a wrong shape from plain JS with a SockbufError', {
  timeout: 60_000,
}, () => {
  assert.ok(existsSync(`${ROOT}dist/index.js`), 'dist/index.js: run npm run build');
  const r = spawnSync(process.execPath, ['test/fixtures/plain-js/wrong-shapes.mjs'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 50_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    calls: number;
    wrong: string[];
    uncovered: string[];
    functions: number;
  };
  assert.deepEqual(out.wrong, []);
  assert.deepEqual(out.uncovered, [], 'exported functions the table does not cover');
  assert.ok(out.calls >= 150 && out.functions >= 20, JSON.stringify(out));
});
