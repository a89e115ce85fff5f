// The hostile sweep over every command's inputs: each option that takes a value (found from the
// commands themselves: commander's tree, and each bench scenario's --help), given values no command
// may take (terminal escapes, line breaks, empty, negative, NaN, 1e999, 400 digits, a bidi override,
// 20 000 characters), each run as the built CLI in its own process group and bounded in time.
// Every run must: end within its bound, be refused (exit 2, or 3 where the environment is what
// refuses), say so in one line naming the option and the value with control characters escaped, print
// no stack trace and no raw control character, and leave nothing behind (no process of its group, no
// network namespace, no file in its working folder).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { scenarioNames } from '../../src/bench/scenario-registry.js';
import { buildProgram } from '../../src/cli/program.js';
import { suiteCommand } from '../../src/cli/suite.js';
import { printable } from '../../src/policy/printable.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/results-hand.json', import.meta.url));

/** Values no option may take. */
export const HOSTILE: readonly string[] = [
  '\u001b]0;pwned\u0007',
  'a\nb',
  '',
  '-1',
  '1e999',
  'NaN',
  '9'.repeat(400),
  '\u202ex',
  'x'.repeat(20_000),
];

/** Options whose value is a file or folder: a hostile name goes under a folder that does not exist. */
const PATHS = new Set(['--out', '--html', '--proc-root']);
/** Options that take any text but the empty one (a token, a lab's id): only '' must be refused. */
const FREE_TEXT = new Set(['--token', '--id']);
/** Options that take host names: `NaN` and `1e999` are names a resolver may know, so not hostile there. */
const NAMES = new Set(['--remote', '--probe-allow']);
const isName = (v: string) => /^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(v) && v.length <= 253;

/** What each command needs besides the option under test, so that it is the option that is judged. */
const BASE: Record<string, string[]> = {
  'sink tcp': ['--listen', '127.0.0.1:0'],
  'sink udp': ['--listen', '127.0.0.1:0'],
  'blast tcp': ['--to', '127.0.0.1:9', '--duration', '100ms'],
  'blast udp': ['--to', '127.0.0.1:9', '--duration', '100ms'],
  exporter: ['--listen', '127.0.0.1:0', '--probe-allow', '127.0.0.1'],
  serve: ['--listen', '127.0.0.1:0'],
  report: [FIXTURE],
  lab: ['--', 'true'],
  'lab exec': ['server', '--', 'true'],
  remote: ['127.0.0.1:9', '--', 'sink', 'tcp'],
};
/** Commands not swept: `lab hold` is the lab's own owner process (hidden), `lab up` takes the lab's options. */
const SKIP = new Set(['lab hold']);

export interface Case {
  /** The command as typed (`sink udp`, `bench tcp`). */
  command: string;
  option: string;
  value: string;
  argv: string[];
}

function walk(c: Command, path: string[], out: { command: string; options: string[] }[]): void {
  const command = path.join(' ');
  const options = c.options.filter((o) => (o.required || o.optional) && o.long).map((o) => o.long as string);
  if (path.length && options.length && !SKIP.has(command)) out.push({ command, options });
  for (const s of c.commands) walk(s, [...path, s.name()], out);
}

/** The value-taking options of a bench scenario, from its --help (the scenario builds its options at run time). */
function scenarioOptions(name: string): Promise<string[]> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, 'bench', name, '--help'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.once('close', () => resolve([...out.matchAll(/^ {2}(--[\w-]+) <[^>]+>/gm)].map((m) => m[1])));
  });
}

/** Every command with the options it takes a value for. */
export async function commandsAndOptions(): Promise<{ command: string; options: string[] }[]> {
  const out: { command: string; options: string[] }[] = [];
  walk(await buildProgram(), [], out);
  const suite = suiteCommand();
  out.push({
    command: 'bench',
    options: suite.options.filter((o) => o.required).map((o) => o.long as string),
  });
  const names = scenarioNames();
  const options = await Promise.all(names.map(scenarioOptions));
  names.forEach((name, i) => {
    out.push({ command: `bench ${name}`, options: options[i] });
  });
  return out;
}

/** The cases: every option with `values` (all of HOSTILE by default), shaped for its kind of option. */
export async function cases(values: readonly string[] = HOSTILE): Promise<Case[]> {
  const out: Case[] = [];
  for (const { command, options } of await commandsAndOptions())
    for (const option of options)
      for (const raw of values) {
        if (FREE_TEXT.has(option) && raw !== '') continue;
        if (NAMES.has(option) && isName(raw)) continue;
        const value = PATHS.has(option) && raw !== '' ? `/nonexistent-sockbuf-sweep/${raw}` : raw;
        const base = BASE[command] ?? [];
        // the option before a `--` that ends the command's own options
        const at = base.indexOf('--');
        const argv =
          at < 0
            ? [...command.split(' '), ...base, `${option}=${value}`]
            : [...command.split(' '), ...base.slice(0, at), `${option}=${value}`, ...base.slice(at)];
        out.push({ command, option, value, argv });
      }
  return out;
}

export interface Outcome {
  code: number | null;
  /** Killed at the bound: it did not refuse the value (or hung). */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Processes of its group still alive after it exited. */
  leftoverProcesses: number;
  /** Files it left in its working folder. */
  leftoverFiles: string[];
}

const netns = () => spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';

function groupAlive(pgid: number): number {
  const r = spawnSync('ps', ['-e', '-o', 'pgid='], { encoding: 'utf8' });
  return (r.stdout ?? '').split('\n').filter((l) => Number(l.trim()) === pgid).length;
}

/** Runs one case as the built CLI, in its own process group and a fresh working folder. */
export function runCase(c: Case, boundSeconds = 15): Promise<Outcome> {
  const cwd = mkdtempSync(join(tmpdir(), 'sockbuf-sweep-'));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...c.argv], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      if (stdout.length < 1 << 20) stdout += d;
    });
    child.stderr.on('data', (d) => {
      if (stderr.length < 1 << 20) stderr += d;
    });
    let timedOut = false;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), sig);
      } catch {
        // the group is gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 3000).unref();
    }, boundSeconds * 1000);
    child.once('close', async (code) => {
      clearTimeout(timer);
      // what its group left behind (a far end, a lab's holder), given a moment to go
      let left = groupAlive(child.pid as number);
      for (let i = 0; left > 0 && i < 20; i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = groupAlive(child.pid as number);
      }
      if (left) kill('SIGKILL');
      const leftoverFiles = readdirSync(cwd);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, timedOut, stdout, stderr, leftoverProcesses: left, leftoverFiles });
    });
  });
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal raw
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/;

/** What is wrong with an outcome (nothing: []). */
export function problems(c: Case, o: Outcome): string[] {
  const out: string[] = [];
  if (o.timedOut) out.push('still running at its bound: the value was taken (or it hung)');
  else if (o.code !== 2 && o.code !== 3)
    out.push(`exit ${o.code} (expected 2, or 3 where the environment refuses)`);
  for (const [name, text] of [
    ['stderr', o.stderr],
    ['stdout', o.stdout],
  ] as const) {
    const m = RAW_CONTROL.exec(text);
    if (m)
      out.push(
        `${name} carries a raw control character U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
  }
  if (
    /^\s+at .+:\d+:\d+\)?$/m.test(o.stderr) ||
    /\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/.test(o.stderr)
  )
    out.push('a stack trace or an internal error');
  if (!o.timedOut) {
    const first = o.stderr.split('\n').find((l) => l.trim()) ?? '';
    const flag = c.option.replace(/^--/, '');
    if (!first.includes(flag)) out.push(`its message does not name ${c.option}: ${first.slice(0, 200)}`);
    const shown = printable(c.value).slice(0, 40);
    if (c.value !== '' && !first.includes(shown))
      out.push(`its message does not show the value: ${first.slice(0, 200)}`);
  }
  if (o.leftoverProcesses) out.push(`${o.leftoverProcesses} processes of its group left running`);
  if (o.leftoverFiles.length) out.push(`left files: ${o.leftoverFiles.join(', ')}`);
  return out;
}

export interface SweepReport {
  cases: number;
  byExit: Record<string, number>;
  failures: { argv: string; problems: string[] }[];
  /** Network namespaces that were not there before the sweep. */
  leftoverNetns: string[];
  seconds: number;
}

/** Runs the cases `parallel` at a time. */
export async function sweep(list: Case[], parallel = 4, onCase?: (i: number) => void): Promise<SweepReport> {
  const t0 = Date.now();
  const before = new Set(netns().split('\n'));
  const report: SweepReport = { cases: list.length, byExit: {}, failures: [], leftoverNetns: [], seconds: 0 };
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < list.length; i = next++) {
      onCase?.(i);
      const c = list[i];
      const o = await runCase(c);
      const key = o.timedOut ? 'timeout' : String(o.code);
      report.byExit[key] = (report.byExit[key] ?? 0) + 1;
      const p = problems(c, o);
      if (p.length) report.failures.push({ argv: printable(c.argv.join(' ')).slice(0, 300), problems: p });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  // a lab's namespaces are named after their owner (sbl-PID-…): new ones whose owner is gone were left
  // behind (another engineer's live lab on the same host is not ours to judge)
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  report.leftoverNetns = netns()
    .split('\n')
    .filter((l) => l && !before.has(l))
    .filter((l) => !alive(Number(/^sbl-(\d+)-/.exec(l)?.[1] ?? 0)));
  report.seconds = (Date.now() - t0) / 1000;
  return report;
}
