// The commands the documentation shows exist, with the flags it shows: every `sockbuf …` line of a
// code block in README.md and docs/**/*.md (and every `sockbuf …` code span) names a command, a
// subcommand or scenario, and only flags that the built CLI's own --help lists for it. A flag renamed
// in the CLI and not in the docs fails here, naming the page and the line. Runs dist (npm test builds).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FLAG_KINDS } from '../src/observe/analyze.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');

/** README.md and every .md file under docs/ but docs/api/ (TypeDoc's, from the doc comments). */
function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && !f.startsWith('api/'))
    .map((f) => join('docs', f))
    .sort();
  return ['README.md', ...docs];
}

/** The lines of a Markdown text that may show a command: shell and plain code blocks, and code spans. */
function commandLines(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = markdown.split('\n');
  let fence: string | undefined;
  lines.forEach((text, i) => {
    const open = /^\s*```(\w*)/.exec(text);
    if (open) {
      fence = fence === undefined ? open[1] : undefined;
      return;
    }
    if (fence === undefined) {
      for (const m of text.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, text: m[1] });
    } else if (['', 'sh', 'bash', 'console'].includes(fence)) {
      out.push({ line: i + 1, text });
    }
  });
  return out;
}

/** Commands that take a subcommand, and their subcommands. */
const SUBCOMMANDS: Record<string, string[]> = {
  sink: ['tcp', 'udp'],
  blast: ['tcp', 'udp'],
  lab: ['up', 'exec', 'down', 'status'],
};

interface Invocation {
  /** The command path, as `sockbuf PATH --help` takes it: ['sink', 'tcp'], ['bench', 'udp'], ['bench']. */
  path: string[];
  flags: string[];
}

/** Each `sockbuf …` invocation in a line: its command path and the long flags it passes. */
function invocations(text: string): Invocation[] {
  const out: Invocation[] = [];
  const starts = [...text.matchAll(/(?:^|[\s"'(`$])sockbuf(?= |$)/g)].map((m) => m.index + m[0].length);
  starts.forEach((start, i) => {
    // the command's own words end at the next sockbuf, a comment, a pipe, a redirection, a list or `--`
    const words: string[] = [];
    for (const w of text
      .slice(start, starts[i + 1])
      .trim()
      .split(/ +/)) {
      if (w === '' || w.startsWith('#') || ['--', '|', '||', '&&', '&', ';', '2>&1'].includes(w)) break;
      if (w.startsWith('>') || w.startsWith('<')) break;
      words.push(w);
    }
    const [command, sub] = words;
    if (command === undefined || !/^[a-z][a-z0-9-]*$/.test(command)) return;
    const path = [command];
    const subs = SUBCOMMANDS[command];
    if (subs && sub !== undefined) {
      // `sink tcp|udp` stands for both
      const named = sub.split('|').filter((s) => subs.includes(s));
      if (named.length > 1) {
        for (const s of named.slice(1)) out.push({ path: [command, s], flags: flagsOf(words.slice(2)) });
      }
      if (named.length) path.push(named[0]);
    } else if (command === 'bench' && sub !== undefined && /^[a-z][a-z0-9-]*$/.test(sub)) {
      path.push(sub);
    }
    out.push({ path, flags: flagsOf(words.slice(path.length)) });
  });
  return out;
}

function flagsOf(words: string[]): string[] {
  return words.flatMap((w) => [...w.matchAll(/(?:^|[[|(])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]));
}

test('invocations reads the command path and its flags, not what follows -- or a comment', () => {
  assert.deepEqual(invocations('npx sockbuf bench --only drain,tcp'), [
    { path: ['bench'], flags: ['--only'] },
  ]);
  assert.deepEqual(invocations('sockbuf lab exec client -- sockbuf inspect --port 5301 # --nope'), [
    { path: ['lab', 'exec'], flags: [] },
    { path: ['inspect'], flags: ['--port'] },
  ]);
  assert.deepEqual(invocations('sockbuf sink tcp|udp --listen PORT'), [
    { path: ['sink', 'udp'], flags: ['--listen'] },
    { path: ['sink', 'tcp'], flags: ['--listen'] },
  ]);
  assert.deepEqual(invocations('sockbuf bench tcp [--sizes 250] | tee x'), [
    { path: ['bench', 'tcp'], flags: ['--sizes'] },
  ]);
  assert.deepEqual(invocations('see sockbuf/dgram and node_modules/sockbuf/docs'), []);
});

interface Help {
  ok: boolean;
  flags: Set<string>;
  text: string;
}

/** `sockbuf PATH --help` of the built CLI, for each path, four processes at a time. */
async function helps(paths: string[][]): Promise<Map<string, Help>> {
  const out = new Map<string, Help>();
  const todo = [...new Map(paths.map((p) => [p.join(' '), p])).values()];
  const worker = async () => {
    for (let path = todo.shift(); path; path = todo.shift()) {
      const text = await new Promise<string>((resolve) => {
        execFile(process.execPath, [CLI, ...path, '--help'], { timeout: 30_000 }, (err, stdout, stderr) => {
          out.set(path.join(' '), { ok: !err, flags: new Set(), text: '' });
          resolve(`${stdout}${stderr}`);
        });
      });
      const h = out.get(path.join(' ')) as Help;
      h.text = text;
      h.flags = new Set(text.match(/--[a-z][a-z0-9-]*/g) ?? []);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return out;
}

test('every sockbuf command and flag in README.md and docs/**/*.md is in the CLI’s --help', {
  timeout: 120_000,
}, async () => {
  assert.ok(existsSync(CLI), 'dist/cli/main.js: run npm run build');
  const found = docPages().flatMap((page) =>
    commandLines(readFileSync(join(ROOT, page), 'utf8')).flatMap(({ line, text }) =>
      invocations(text).map((inv) => ({ page, line, ...inv })),
    ),
  );
  // the commands `sockbuf --help` lists; another word after "sockbuf" is prose ("sockbuf never writes")
  const top = (await helps([[]])).get('') as Help;
  const commands = new Set([...top.text.matchAll(/^ {2}([a-z][a-z0-9-]*)\b/gm)].map((m) => m[1]));
  assert.ok(commands.has('bench') && commands.has('sink'), top.text);
  const shown = found.filter((f) => commands.has(f.path[0]));
  assert.ok(shown.length > 50, `found ${shown.length} sockbuf invocations`);
  const help = await helps([['lab'], ...shown.map((f) => f.path)]);
  const wrong: string[] = [];
  for (const { page, line, path, flags } of shown) {
    const h = help.get(path.join(' ')) as Help;
    if (!h.ok) {
      wrong.push(`${page}:${line}: sockbuf ${path.join(' ')}: ${h.text.trim().split('\n')[0]}`);
      continue;
    }
    // a lab subcommand takes the lab's own options (`lab up --rtt 2ms`)
    const parent = path[0] === 'lab' && path.length > 1 ? (help.get('lab') as Help).flags : new Set<string>();
    const unknown = flags.filter((f) => !h.flags.has(f) && !parent.has(f) && f !== '--help');
    if (unknown.length) wrong.push(`${page}:${line}: sockbuf ${path.join(' ')}: no ${unknown.join(', ')}`);
  }
  assert.deepEqual(wrong, []);
});

test('docs/cli/inspect.md has a row for every kind of flag inspect sets', () => {
  const page = readFileSync(join(ROOT, 'docs/cli/inspect.md'), 'utf8');
  assert.deepEqual(
    FLAG_KINDS.filter((k) => !page.includes(`| \`${k}\``)),
    [],
  );
});
