// The documentation as code: every ```ts block of README.md and of docs/**/*.md compiles on its own
// under tsc --strict against the built package (each block is written to a file of its own inside the
// repository, so `import … from 'sockbuf'` resolves to this package's exports, i.e. dist/index.d.ts),
// every ```json block parses (and one that names `sockbuf.v1` is valid against docs/results-schema.json),
// every ```yaml block parses (and a Prometheus scrape config passes `promtool check config`), and every
// relative link in them points at a file that exists (and, with #anchor, at a heading of it).
// npm test builds first.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * README.md and every .md file under docs/, relative to the repository; docs/api/ aside (TypeDoc writes
 * it from the doc comments and checks its own links: npm run docs:api).
 */
function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && !f.startsWith('api/'))
    .map((f) => join('docs', f))
    .sort();
  return ['README.md', ...docs];
}

/** The ```LANG blocks of a Markdown text (```ts by default), with the line each starts on. */
function tsBlocks(markdown: string, lang = 'ts'): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // ```ts run marks a block that is also run as a program (test/docs-run.test.ts)
    const fence = lines[i].trim();
    if (fence !== `\`\`\`${lang}` && fence !== `\`\`\`${lang} run`) continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1].trim() !== '```') i++;
    blocks.push({ line: start + 1, code: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

/** The Markdown text outside fenced blocks and code spans (links inside code are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The targets of the inline links `[text](target)` of a Markdown text. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings (outside fenced blocks). */
function anchors(markdown: string): Set<string> {
  const seen = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    let a = anchor(m[1]);
    for (let n = 1; seen.has(a); n++) a = `${anchor(m[1])}-${n}`;
    seen.add(a);
  }
  return seen;
}

test('tsBlocks finds each ```ts block and its line', () => {
  const md = 'a\n```ts\nconst x = 1;\n```\n```sh\nls\n```\n```ts run\nlet y;\ny = 2;\n```\n';
  assert.deepEqual(tsBlocks(md), [
    { line: 3, code: 'const x = 1;' },
    { line: 9, code: 'let y;\ny = 2;' },
  ]);
});

test('linkTargets finds inline links outside code, anchor() follows GitHub', () => {
  const md = 'see [a](docs/a.md) and [b](https://x.y "t")\n`[c](no.md)`\n```\n[d](no.md)\n```\n[e](#f-g)';
  assert.deepEqual(linkTargets(md), ['docs/a.md', 'https://x.y', '#f-g']);
  assert.equal(anchor('`sockbuf bench` — running a benchmark'), 'sockbuf-bench--running-a-benchmark');
  assert.deepEqual([...anchors('# A b\n## A b\n```\n# no\n```\n')], ['a-b', 'a-b-1']);
});

test('every ```ts block of README.md and docs/**/*.md type-checks under tsc --strict against the built package', {
  timeout: 120_000,
}, () => {
  assert.ok(existsSync(join(ROOT, 'dist/index.d.ts')), 'dist/index.d.ts: run npm run build');
  const dir = join(ROOT, 'test-artifacts', 'readme');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const page of docPages()) {
    for (const b of tsBlocks(readFileSync(join(ROOT, page), 'utf8'))) {
      // the file names the page and the line its block starts on: docs-dgram.md-5.ts
      const file = `${page.replace(/[/\\]/g, '-')}-${b.line}.ts`;
      // `export {}` makes each block a module of its own (top-level await, no shared names)
      writeFileSync(join(dir, file), `${b.code}\nexport {};\n`);
      files.push(file);
    }
  }
  assert.ok(files.length >= 6, `found ${files.length} blocks`);
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
  // tsc's errors name PAGE-LINE.ts: LINE is where the block starts in that page
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});

test('every relative link of README.md and docs/**/*.md resolves to a file (and its #anchor to a heading)', () => {
  const broken: string[] = [];
  for (const page of docPages()) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const target of linkTargets(text)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [path, hash] = target.split('#');
      const file = path ? join(ROOT, dirname(page), decodeURIComponent(path)) : join(ROOT, page);
      if (!existsSync(file)) {
        broken.push(`${page}: ${target} (no ${relative(ROOT, file)})`);
      } else if (hash && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(hash)) {
        broken.push(`${page}: ${target} (no heading #${hash} in ${relative(ROOT, file)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('every ```json block of README.md and docs/**/*.md parses; a sockbuf.v1 one fits docs/results-schema.json', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const valid = ajv.compile(JSON.parse(readFileSync(join(ROOT, 'docs/results-schema.json'), 'utf8')));
  const wrong: string[] = [];
  let documents = 0;
  for (const page of docPages()) {
    for (const b of tsBlocks(readFileSync(join(ROOT, page), 'utf8'), 'json')) {
      let doc: unknown;
      try {
        doc = JSON.parse(b.code);
      } catch (err) {
        wrong.push(`${page}:${b.line}: ${(err as Error).message}`);
        continue;
      }
      if ((doc as { schema?: unknown }).schema !== 'sockbuf.v1') continue;
      documents++;
      if (!valid(doc)) wrong.push(`${page}:${b.line}: ${ajv.errorsText(valid.errors)}`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.ok(documents >= 1, 'the results document shown in docs/cli/bench.md');
});

const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

test('every ```yaml block of README.md and docs/**/*.md parses; a scrape config passes promtool check config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-docs-yaml-'));
  const wrong: string[] = [];
  let configs = 0;
  try {
    for (const page of docPages()) {
      for (const b of tsBlocks(readFileSync(join(ROOT, page), 'utf8'), 'yaml')) {
        let doc: { scrape_configs?: unknown; rule_files?: unknown } | null;
        try {
          doc = parseYaml(b.code);
        } catch (err) {
          wrong.push(`${page}:${b.line}: ${(err as Error).message}`);
          continue;
        }
        if (!PROMTOOL || !doc?.scrape_configs) continue;
        configs++;
        // the rule files a config names are the reader's; the scrape configs are checked as written
        const file = join(dir, `${configs}.yml`);
        writeFileSync(file, stringifyYaml({ scrape_configs: doc.scrape_configs }));
        const r = spawnSync('promtool', ['check', 'config', '--syntax-only', file], { encoding: 'utf8' });
        // Debian's Prometheus is built without some service discoveries (kubernetes_sd_configs):
        // that is this build's lack, not the page's
        if (r.status !== 0 && !/field \w+_sd_configs not found/.test(r.stdout + r.stderr)) {
          wrong.push(`${page}:${b.line}: ${r.stdout}${r.stderr}`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(wrong, []);
  if (PROMTOOL) assert.ok(configs >= 3, `${configs} scrape configs checked`);
});

test('README.md is the front door: at most 250 lines, the dependency install on its first screen', () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  assert.ok(lines.length <= 250, `README.md has ${lines.length} lines: move detail to docs/`);
  const first = lines.slice(0, 40).join('\n');
  assert.match(first, /npm install sockbuf\b/);
  assert.match(first, /npm pack/);
  // the tarball `npm pack` writes is named after package.json's version
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.ok(first.includes(`npm install ./sockbuf-${version}.tgz`), `README names sockbuf-${version}.tgz`);
});

test('every alert of the shipped rules (docs/**/sockbuf-rules.yml) has a row in docs/fleet.md', () => {
  const rules = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).find(
    (f) => f.split('/').pop() === 'sockbuf-rules.yml',
  );
  assert.ok(rules, 'docs/**/sockbuf-rules.yml');
  const doc = parseYaml(readFileSync(join(ROOT, 'docs', rules), 'utf8')) as {
    groups: { rules: { alert?: string }[] }[];
  };
  const alerts = doc.groups.flatMap((g) => g.rules.map((r) => r.alert)).filter((a) => a !== undefined);
  assert.ok(alerts.length >= 9, alerts.join(' '));
  const fleet = readFileSync(join(ROOT, 'docs/fleet.md'), 'utf8');
  assert.deepEqual(
    alerts.filter((a) => !fleet.includes(`| \`${a}\``)),
    [],
    'alerts without a row in docs/fleet.md',
  );
});
