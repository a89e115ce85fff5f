// The documentation's examples are programs: every ```ts block of README.md, and every block of docs/
// marked ```ts run, is run as an application runs it. `npm pack` → the tarball installed into a scratch
// application (type: module) → each block written there as a file of its own and run with tsx, 20 s
// each. A block fails when it hangs (still running after 20 s), exits non-zero (a throw) or writes
// anything to stderr (a warning, an error printed). The runner's own verdicts are checked first on
// three broken blocks, so that a runner that passes everything cannot pass. npm test builds first;
// The install is the README's: npm 11's install-scripts warning must name only what README.md's
// `npm install-scripts deny` line denies, and that line must silence it.
// The whole file takes about 15–30 s on this host (the install ~5 s from npm's cache, each block 1–2 s).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// tsx as a loader in the block's own process (`node --import tsx`): its CLI runs the program in a child
// that a timeout's SIGKILL to the CLI left running (CI found a hanging block still alive after the run)
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const BLOCK_SECONDS = 20;

/** The blocks to run: README's ```ts blocks and docs/' ```ts run blocks, with page and line. */
function runnableBlocks(): { where: string; code: string }[] {
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md') && !f.startsWith('api/'))
      .map((f) => join('docs', f))
      .sort(),
  ];
  const blocks: { where: string; code: string }[] = [];
  for (const page of pages) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    const wanted = page === 'README.md' ? ['```ts', '```ts run'] : ['```ts run'];
    for (let i = 0; i < lines.length; i++) {
      if (!wanted.includes(lines[i].trim())) continue;
      const start = i + 1;
      while (i + 1 < lines.length && lines[i + 1].trim() !== '```') i++;
      blocks.push({ where: `${page}:${start + 1}`, code: lines.slice(start, i + 1).join('\n') });
    }
  }
  return blocks;
}

/** Runs `code` as a program in `app` with tsx; what is wrong with the run, or undefined. */
function runBlock(app: string, name: string, code: string, seconds = BLOCK_SECONDS): string | undefined {
  const file = join(app, `${name.replace(/[^\w.-]/g, '_')}.ts`);
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, ['--import', TSX, file], {
    cwd: app,
    encoding: 'utf8',
    timeout: seconds * 1000,
    killSignal: 'SIGKILL',
    env: { ...process.env, NODE_OPTIONS: '', NODE_NO_WARNINGS: '' },
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT')
    return `still running after ${seconds} s (it must end by itself)`;
  if (r.status !== 0) return `exited ${r.status ?? r.signal}: ${r.stderr.trim().slice(0, 2000)}`;
  if (r.stderr.trim() !== '') return `wrote to stderr: ${r.stderr.trim().slice(0, 2000)}`;
  return undefined;
}

let app = '';
/** What npm printed on stderr when the tarball was installed. */
let installWarnings = '';

before(() => {
  assert.ok(existsSync(join(ROOT, 'dist/index.js')), 'dist/index.js: run npm run build');
  app = mkdtempSync(join(tmpdir(), 'sockbuf-docs-run-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', app], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    }),
  );
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'docs-app', version: '1.0.0', private: true, type: 'module' }),
  );
  // as README.md says to: npm 11 names the install scripts its allowScripts does not cover
  const r = spawnSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${packed.filename}`],
    {
      cwd: app,
      encoding: 'utf8',
      timeout: 90_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  installWarnings = r.stderr;
});

test('README.md names every install script npm warns of when the tarball is installed, and its deny line silences them', {
  timeout: 120_000,
}, () => {
  const named = [...installWarnings.matchAll(/^npm warn install-scripts +(\S+)@[\d.]+ \((\w+):/gm)].map(
    (m) => ({
      pkg: m[1],
      script: m[2],
    }),
  );
  assert.ok(named.length > 0, `npm 11 warned of no install script: ${installWarnings}`);
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const deny = /^npm install-scripts deny ([\w -]+?)\s+#/m.exec(readme);
  assert.ok(deny, 'README.md has an `npm install-scripts deny …` line');
  const denied = deny[1].trim().split(/\s+/);
  for (const { pkg, script } of named) {
    assert.ok(denied.includes(pkg), `${pkg} is not in README's deny line`);
    assert.ok(
      readme.includes(`${pkg}@`) && readme.includes(`(${script}:`),
      `README names ${pkg}'s ${script}`,
    );
  }
  const r = spawnSync('npm', ['install-scripts', 'deny', ...denied], {
    cwd: app,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const again = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: app,
    encoding: 'utf8',
    timeout: 90_000,
  });
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /install-scripts/, 'npm still warns after the deny line');
});

after(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

test('the runner fails a block that hangs, one that throws and one that writes to stderr', {
  timeout: 60_000,
}, () => {
  const hang = runBlock(
    app,
    'hang',
    "import { listen } from 'sockbuf';\nawait listen({ port: 0 }, () => {});",
    3,
  );
  assert.match(hang ?? '', /still running after 3 s/);
  assert.match(runBlock(app, 'throw', "throw new Error('broken');") ?? '', /exited 1: .*broken/s);
  assert.match(runBlock(app, 'stderr', "console.error('oops');") ?? '', /wrote to stderr: oops/);
  assert.equal(
    runBlock(app, 'fine', "import { ceiling } from 'sockbuf';\nconsole.log(ceiling(1, 1));"),
    undefined,
  );
});

test(`every \`\`\`ts block of README.md and \`\`\`ts run block of docs/ runs from the packed tarball and ends within ${BLOCK_SECONDS} s, silent on stderr`, {
  timeout: 600_000,
}, () => {
  const blocks = runnableBlocks();
  assert.ok(blocks.length >= 7, `${blocks.length} blocks`);
  const wrong: string[] = [];
  for (const b of blocks) {
    const why = runBlock(app, b.where, b.code);
    if (why) wrong.push(`${b.where}: ${why}`);
  }
  assert.deepEqual(wrong, []);
});
