// Every usage error is one line (issue 37 item 5): for EVERY command of the program (read from the
// commander tree itself, plus the quick suite and each bench scenario's own command), an unknown flag, a
// missing value and a bad choice each print exactly one line on stderr naming the flag, with a hint to
// --help, and exit 2; so does a required option not given. The built CLI is spawned (npm run build first).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import type { Command } from 'commander';
import { loadScenarios } from '../../src/bench/scenario-registry.js';
import { scenarioCommand } from '../../src/cli/bench.js';
import { buildProgram } from '../../src/cli/program.js';
import { suiteCommand } from '../../src/cli/suite.js';
import { SOCKBUF_ARGV } from './argv.js';

interface Target {
  /** The words that reach the command: `['sink', 'udp']`. */
  words: string[];
  cmd: Command;
}

/** Every command of the tree, the root included; `bench` is the suite's command and each scenario's. */
async function targets(): Promise<Target[]> {
  const out: Target[] = [];
  const walk = (cmd: Command, words: string[]) => {
    if (words.join(' ') === 'bench') {
      out.push({ words, cmd: suiteCommand() });
      return;
    }
    out.push({ words, cmd });
    for (const sub of cmd.commands) walk(sub, [...words, sub.name()]);
  };
  walk(await buildProgram(), []);
  for (const s of await loadScenarios()) out.push({ words: ['bench', s.name], cmd: scenarioCommand(s).cmd });
  return out;
}

interface Case {
  name: string;
  args: string[];
  /** The flag the line must name. */
  flag: string;
}

function cases({ words, cmd }: Target): Case[] {
  const list: Case[] = [{ name: 'an unknown flag', args: [...words, '--bogus'], flag: '--bogus' }];
  const valued = cmd.options.find((o) => o.required && o.long);
  if (valued?.long)
    list.push({ name: `a missing value (${valued.long})`, args: [...words, valued.long], flag: valued.long });
  const choice = cmd.options.find((o) => o.argChoices && o.long);
  if (choice?.long)
    list.push({
      name: `a bad choice (${choice.long})`,
      args: [...words, choice.long, 'no-such-choice'],
      flag: choice.long,
    });
  const mandatory = cmd.options.find((o) => o.mandatory && o.long);
  if (mandatory?.long)
    list.push({ name: `a required option not given (${mandatory.long})`, args: words, flag: mandatory.long });
  return list;
}

function sockbuf(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SOCKBUF_ARGV, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** Runs `jobs` a few at a time (2 CPUs shared). */
async function pool<T>(jobs: (() => Promise<T>)[], width = 4): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]();
      }
    }),
  );
  return results;
}

test('every command × an unknown flag, a missing value, a bad choice, a required option: one line naming the flag, a --help hint, exit 2', async () => {
  const all = (await targets()).flatMap((t) => cases(t).map((c) => ({ ...c, where: t.words.join(' ') })));
  // the tree is read, not listed: every top-level command and the scenarios are there
  const wheres = new Set(all.map((c) => c.where));
  for (const w of [
    '',
    'sink tcp',
    'sink udp',
    'blast udp',
    'doctor',
    'inspect',
    'exporter',
    'lab up',
    'report',
  ])
    assert.ok(wheres.has(w), `no case for '${w}'`);
  assert.ok(all.filter((c) => c.name.startsWith('a bad choice')).length >= 5, 'few choices declared');
  assert.ok(all.filter((c) => c.name.startsWith('a missing value')).length >= 20);

  const results = await pool(all.map((c) => () => sockbuf(c.args)));
  const failures: string[] = [];
  all.forEach((c, i) => {
    const r = results[i];
    const lines = r.stderr.replace(/\n$/, '').split('\n');
    const problems = [
      r.status === 2 ? '' : `exit ${r.status}`,
      lines.length === 1 ? '' : `${lines.length} lines on stderr`,
      r.stdout === '' ? '' : 'output on stdout',
      r.stderr.includes(c.flag) ? '' : `does not name ${c.flag}`,
      /see 'sockbuf.* --help'/.test(r.stderr) ? '' : 'no --help hint',
    ].filter(Boolean);
    if (problems.length)
      failures.push(
        `sockbuf ${c.args.join(' ')} (${c.name}): ${problems.join(', ')}\n  ${r.stderr.slice(0, 400)}`,
      );
  });
  assert.deepEqual(failures, [], `${failures.length} of ${all.length} cases:\n${failures.join('\n')}`);
});

test('an unknown flag before a required option is reported as unknown, not as the required one missing', async () => {
  const r = await sockbuf(['sink', 'udp', '--bogus']);
  assert.equal(r.status, 2);
  assert.match(
    r.stderr,
    /^sockbuf: unknown option '--bogus' for 'sockbuf sink udp'; see 'sockbuf sink udp --help'\n$/,
  );
  const typo = await sockbuf(['blast', 'udp', '--too', '127.0.0.1:9']);
  assert.match(typo.stderr, /unknown option '--too' .*\(did you mean --to\?\)/);
});

test('a flag with control characters in it is one line, shown escaped', async () => {
  const r = await sockbuf(['doctor', '--\u001b]0;pwned\u0007\nx']);
  assert.equal(r.status, 2);
  assert.equal(
    r.stderr,
    "sockbuf: unknown option '--\\x1b]0;pwned\\x07\\x0ax' for 'sockbuf doctor'; see 'sockbuf doctor --help'\n",
  );
});

test('a group without its command, and an unknown command, are one line naming what there is', async () => {
  const group = await sockbuf(['sink']);
  assert.equal(group.status, 2);
  assert.equal(
    group.stderr,
    "sockbuf: 'sockbuf sink' needs a command (tcp, udp); see 'sockbuf sink --help'\n",
  );
  const unknown = await sockbuf(['sinc']);
  assert.equal(unknown.status, 2);
  assert.match(
    unknown.stderr,
    /^sockbuf: unknown command 'sinc' for 'sockbuf' \(did you mean sink\? commands: .*\n$/,
  );
});
