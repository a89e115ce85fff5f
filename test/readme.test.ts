// Every ```ts block of README.md compiles on its own under tsc --strict against the built package:
// each block is written to a file of its own inside the repository (so `import … from 'sockbuf'`
// resolves to this package's exports, i.e. dist/index.d.ts) and type-checked. npm test builds first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The ```ts blocks of a Markdown text, with the line each starts on. */
function tsBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1].trim() !== '```') i++;
    blocks.push({ line: start + 1, code: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

test('tsBlocks finds each ```ts block and its line', () => {
  const md = 'a\n```ts\nconst x = 1;\n```\n```sh\nls\n```\n```ts\nlet y;\ny = 2;\n```\n';
  assert.deepEqual(tsBlocks(md), [
    { line: 3, code: 'const x = 1;' },
    { line: 9, code: 'let y;\ny = 2;' },
  ]);
});

test('every ```ts block of README.md type-checks under tsc --strict against the built package', {
  timeout: 120_000,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/index.d.ts')), 'dist/index.d.ts: run npm run build');
  const blocks = tsBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  assert.ok(blocks.length >= 4, `found ${blocks.length} blocks`);
  const dir = join(ROOT, 'test-artifacts', 'readme');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = blocks.map((b) => {
    const file = `readme-${b.line}.ts`;
    // `export {}` makes each block a module of its own (top-level await, no shared names)
    writeFileSync(join(dir, file), `${b.code}\nexport {};\n`);
    return file;
  });
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      lib: ['ES2023'],
      types: ['node'],
      skipLibCheck: true,
    },
    files,
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    encoding: 'utf8',
    timeout: 100_000,
  });
  // tsc's errors name readme-LINE.ts: LINE is where the block starts in README.md
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});
