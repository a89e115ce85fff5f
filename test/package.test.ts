// The package as an application gets it: the built entry loads by require() from CommonJS (Node ≥ 20.19
// loads an ES module graph without top-level await), the report's Chart.js is a build asset rather than
// a dependency, and the MIT licence is in the repository. Runs against dist (npm test builds first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const built = () => assert.ok(existsSync(join(ROOT, 'dist/index.js')), 'dist/index.js: run npm run build');

test("require('sockbuf') and require('sockbuf/tools') work from CommonJS (a self-reference through the package's exports)", () => {
  built();
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      "const s = require('sockbuf'); const t = require('sockbuf/tools'); console.log(typeof s.connect, typeof s.createUdpReceiver, typeof t.runBench, typeof s.runBench)",
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'function function function undefined');
  assert.equal(pkg.engines.node, '>=20.19');
});

test('chart.js is a devDependency; the build puts its bundle beside the report, with its MIT notice', () => {
  built();
  assert.equal(pkg.dependencies['chart.js'], undefined);
  assert.ok(pkg.devDependencies['chart.js']);
  const asset = readFileSync(join(ROOT, 'dist/bench/report/chart.umd.min.js'), 'utf8');
  assert.match(asset.slice(0, 200), /Chart\.js v4[\s\S]*MIT License/);
});

test('LICENSE: MIT, sockbuf contributors, as package.json says', () => {
  assert.equal(pkg.license, 'MIT');
  const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  assert.match(text, /^MIT License/);
  assert.match(text, /sockbuf contributors/);
});
