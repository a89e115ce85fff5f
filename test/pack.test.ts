// The package as an application installs it: `npm pack`, then install the tarball into a scratch app
// beside the app's own prom-client 14. The app's production tree has no chart.js (the report's copy
// ships in dist), registerMetrics type-checks against the app's Registry and fills it, and require()
// loads sockbuf from CommonJS. Runs against dist (npm test builds first); dependencies come from npm's
// cache when it has them (--prefer-offline), else from the registry.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

test('npm pack → install into a scratch app: no chart.js in production, registerMetrics fits prom-client 14', {
  timeout: 90_000,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/index.js')), 'dist/index.js: run npm run build');
  const app = mkdtempSync(join(tmpdir(), 'sockbuf-app-'));
  const run = (cmd: string, args: string[]) =>
    execFileSync(cmd, args, {
      cwd: app,
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  try {
    // dist is built already: no prepare script on pack, no install scripts in the app
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', app], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      }),
    );
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', private: true }),
    );
    run('npm', [
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      join(app, packed.filename),
      'prom-client@14',
    ]);

    const tree = run('npm', ['ls', '--omit=dev', '--all', '--parseable']);
    assert.match(tree, /node_modules\/sockbuf$/m, 'sockbuf installed');
    assert.doesNotMatch(tree, /chart\.js/, 'chart.js in the production tree');
    assert.ok(existsSync(join(app, 'node_modules/sockbuf/dist/bench/report/chart.umd.min.js')));

    writeFileSync(
      join(app, 'app.ts'),
      `import { Registry } from 'prom-client';
import { registerMetrics } from 'sockbuf';
const registry = new Registry();
registerMetrics(registry);
registry.metrics().then((text) => console.log(text));
`,
    );
    const tsconfig = {
      compilerOptions: {
        strict: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        outDir: 'out',
        skipLibCheck: false,
        typeRoots: [join(ROOT, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['app.ts'],
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    run(process.execPath, [TSC, '-p', '.']); // throws with tsc's errors on stdout if it does not type-check
    assert.match(run('npm', ['ls', 'prom-client', '--depth=0']), /prom-client@14\./);
    const out = run(process.execPath, ['out/app.js']);
    assert.match(out, /# TYPE sockbuf_udp_received_total counter/);

    const cjs = run(process.execPath, ['-e', "console.log(typeof require('sockbuf').registerMetrics)"]);
    assert.equal(cjs.trim(), 'function');

    // what a fleet needs ships: the rules (the installed CLI prints the same), the unit, the DaemonSet
    const docs = join(app, 'node_modules/sockbuf/docs/deploy');
    for (const f of ['sockbuf-rules.yml', 'sockbuf-exporter.service', 'sockbuf-exporter-daemonset.yaml'])
      assert.ok(existsSync(join(docs, f)), `${f} is in the package`);
    assert.equal(
      run(join(app, 'node_modules/.bin/sockbuf'), ['exporter', '--print-rules']),
      readFileSync(join(docs, 'sockbuf-rules.yml'), 'utf8'),
    );
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});

test('npm pack → npm install -g into a scratch prefix: a working sockbuf (--version, doctor --json), installed as the Dockerfile does', {
  timeout: 120_000,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/cli/main.js')), 'dist/cli/main.js: run npm run build');
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-global-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      }),
    );
    // the Dockerfile's install line, with a prefix of our own instead of the image's /usr/local
    const dockerfile = readFileSync(join(ROOT, 'docs/deploy/Dockerfile'), 'utf8');
    const flags = ['--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'];
    assert.match(dockerfile, new RegExp(`npm install -g ${flags.join(' ')} "\\$1"`));
    assert.match(dockerfile, /^COPY sockbuf-\*\.tgz /m);
    assert.match(packed.filename, /^sockbuf-[\d.]+\.tgz$/, 'the name the Dockerfile copies');
    const prefix = join(dir, 'prefix');
    execFileSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', ...flags, join(dir, packed.filename)],
      {
        cwd: dir,
        encoding: 'utf8',
        timeout: 90_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const bin = join(prefix, 'bin/sockbuf');
    const sockbuf = (...args: string[]) =>
      spawnSync(bin, args, {
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, NODE_OPTIONS: '' },
      });
    const version = sockbuf('--version');
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    // doctor reads sysctls and /proc through koffi and the installed dependencies: 0, or 1 for a finding
    const doctor = sockbuf('doctor', '--json');
    assert.ok(doctor.status === 0 || doctor.status === 1, `doctor exited ${doctor.status}: ${doctor.stderr}`);
    const doc = JSON.parse(doctor.stdout);
    assert.equal(doc.schema, 'sockbuf.v1');
    assert.equal(doc.command, 'doctor');
    // the installed exporter prints the shipped rules
    const rules = sockbuf('exporter', '--print-rules');
    assert.equal(rules.stdout, readFileSync(join(ROOT, 'docs/deploy/sockbuf-rules.yml'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
