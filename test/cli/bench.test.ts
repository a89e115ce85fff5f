// `sockbuf bench` as a command, with the fixture scenario test/fixtures/bench/pair-scenario.mjs (two
// points, fast = 2 × slow, over loopback TCP): the document, --expect, exit codes, progress, signals.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { which } from '../../src/bench/placement.js';
import { checkResults } from '../../src/bench/report/results.js';
import { parseProcStat, processRunning } from '../../src/sys/process.js';

function procStat(pid: number) {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const PAIR = fileURLToPath(new URL('../fixtures/bench/pair-scenario.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-bench-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'bench', PAIR, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });

test('--json: stdout is one sockbuf.v1 document with every run and the medians; --out writes the same', () => {
  const out = join(dir, 'out.json');
  const r = bench('--repeat', '3', '--values', '5,1,3', '--counter', join(dir, 'c1'), '--json', '--out', out);
  assert.equal(r.status, 0, r.stderr);
  const doc = checkResults(JSON.parse(r.stdout)); // throws unless the whole of stdout is one document
  assert.equal(doc.command, 'bench pair');
  assert.equal(doc.params.repeat, 3);
  assert.equal((doc.params.placement as { name: string }).name, 'local');
  assert.deepEqual(
    doc.results.map((row) => [row.variant, row.repeats, row.value]),
    [
      ['fast', 3, { median: 6, min: 2, max: 10, values: [10, 2, 6] }],
      ['slow', 3, { median: 3, min: 1, max: 5, values: [5, 1, 3] }],
    ],
  );
  assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')).results, doc.results);
  assert.doesNotMatch(r.stderr, /bench \[/, 'no progress bar when stderr is not a terminal');
});

test('the table and met/unmet expectations; an unmet one exits 1 with the figure', () => {
  const ok = bench('--repeat', '1', '--expect', 'fast/slow >= 1.5', '--expect', 'bytes >= 65536');
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^variant +value +bytes\n/);
  assert.match(ok.stdout, /^fast +2 +64 KiB$/m);
  assert.match(
    ok.stdout,
    /met {3}--expect 'fast\/slow >= 1.5': value\[fast\] \/ value\[slow\] = 2 \(wanted >= 1.5\)/,
  );

  const bad = bench('--repeat', '1', '--expect', 'fast/slow >= 3');
  assert.equal(bad.status, 1);
  assert.match(
    bad.stdout,
    /UNMET --expect 'fast\/slow >= 3': value\[fast\] \/ value\[slow\] = 2 \(wanted >= 3\)/,
  );
});

test('a bad --expect is exit 2 naming --expect, before any end starts', () => {
  const pidfile = join(dir, 'pids-bad-expect');
  const r = bench('--expect', 'fast >> 2', '--pidfile', pidfile);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /invalid value for --expect: 'fast >> 2'/);
  assert.equal(existsSync(pidfile), false);
  const unknown = bench('--repeat', '1', '--expect', 'quick/slow > 1');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /--expect: 'quick\/slow > 1' \(no point is labelled 'quick'/);
});

test('usage errors and refusals: unknown scenario and bad --repeat or --lab exit 2, --placement lab without a lab exits 3', () => {
  const u = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'bench', 'no-such-scenario'], {
    encoding: 'utf8',
  });
  assert.equal(u.status, 2);
  assert.match(u.stderr, /invalid value for <scenario>: 'no-such-scenario'/);
  const rep = bench('--repeat', '0');
  assert.equal(rep.status, 2);
  assert.match(rep.stderr, /--repeat: '0'/);
  const badLab = bench('--lab', 'rtt=2');
  assert.equal(badLab.status, 2);
  assert.match(badLab.stderr, /--lab rtt: '2'/);
  if (/sbl-\d+-s/.test(spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '')) return; // someone's lab is up
  const lab = bench('--placement', 'lab');
  assert.equal(lab.status, 3);
  assert.match(lab.stderr, /--placement lab: no lab is up/);
});

test('--lab brings a lab up for the bench, runs the ends across it, says so, and takes it down', {
  skip: process.getuid?.() !== 0 && 'needs root',
}, () => {
  const r = bench('--repeat', '1', '--lab', 'rtt=4ms', '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /lab \d+: rtt 4 ms, tcp cubic; measured rtt .*delay line: userspace-tun/);
  const doc = checkResults(JSON.parse(r.stdout));
  const placement = doc.params.placement as {
    name: string;
    rttUs: number;
    mode: string;
    congestion: string;
    measured: { rttUs: number };
  };
  assert.equal(placement.name, 'lab');
  assert.equal(placement.congestion, 'cubic');
  assert.equal(placement.rttUs, 4000);
  assert.ok(placement.measured.rttUs >= 4000);
  const id = /lab (\d+):/.exec(r.stderr)?.[1];
  assert.doesNotMatch(
    spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout,
    new RegExp(`sbl-${id}-`),
  );
});

test('a failing end: exit 1, the end named with its stderr, no process left behind', () => {
  const pidfile = join(dir, 'pids-fail');
  const r = bench('--repeat', '1', '--mode', 'fail-sender', '--pidfile', pidfile);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /run 1\/1 of point "fast": the sender exited with code 1/);
  assert.match(r.stderr, /\| sender: failing with code 1 \(test\)/);
  const pids = readFileSync(pidfile, 'utf8').trim().split('\n');
  assert.equal(pids.length, 3); // receiver, its grandchild, sender
  for (const line of pids) assert.equal(processRunning(Number(line.split(' ')[2])), false, line);
});

/** Starts `sockbuf bench pair --mode hang-sender` and resolves once both ends have written their pids. */
async function hangingBench(pidfile: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'bench', PAIR, '--mode', 'hang-sender', '--pidfile', pidfile],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  // Bounded: the run itself times out after 20 s.
  const read = () => (existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim().split('\n') : []);
  for (let i = 0; i < 400 && !read().some((l) => l.startsWith('sender')); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const pids = read().map((l) => ({ line: l, pid: Number(l.split(' ')[2]) }));
  return { child, exited, pids, stderr: () => stderr };
}

test('SIGKILL of the runner (no clean-up possible): the kernel kills both ends through their parent-death signal', {
  skip: which('setpriv') ? false : 'needs setpriv(1) from util-linux',
}, async () => {
  const run = await hangingBench(join(dir, 'pids-kill'));
  try {
    assert.equal(run.pids.length, 3, run.pids.map((p) => p.line).join('; '));
    run.child.kill('SIGKILL');
    await run.exited;
    const ends = run.pids.filter((p) => p.line.includes(' self '));
    // The signal is delivered as the runner dies; give the ends a bounded moment to be gone.
    for (let i = 0; i < 100 && ends.some((p) => processRunning(p.pid)); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const p of ends) assert.equal(processRunning(p.pid), false, p.line);
  } finally {
    // An end's own child outlives it here (it has no parent-death signal): ours to clean up, as is
    // anything left should the test fail.
    // Only processes still in one of the ends' groups: a pid that was reused is not ours.
    run.child.kill('SIGKILL');
    const groups = new Set(run.pids.filter((p) => p.line.includes(' self ')).map((p) => p.pid));
    for (const p of run.pids) {
      const stat = procStat(p.pid);
      if (stat && stat.state !== 'Z' && groups.has(stat.pgrp)) process.kill(p.pid, 'SIGKILL');
    }
  }
});

test('SIGTERM to the runner kills and reaps both ends (and their children), exit 143', async () => {
  const run = await hangingBench(join(dir, 'pids-term'));
  assert.equal(run.pids.length, 3, run.pids.map((p) => p.line).join('; '));
  run.child.kill('SIGTERM');
  assert.equal(await run.exited, 143);
  assert.match(run.stderr(), /interrupted by SIGTERM; both ends stopped/);
  for (const p of run.pids) assert.equal(processRunning(p.pid), false, p.line);
});

const script = which('script');
test('on a terminal the progress bar goes to stderr while stdout stays one document', {
  skip: script ? false : 'needs script(1) from util-linux for a pseudo-terminal',
}, () => {
  const out = join(dir, 'tty.json');
  const cmd = [process.execPath, '--import', 'tsx', MAIN, 'bench', PAIR, '--repeat', '1', '--json']
    .map((a) => `'${a}'`)
    .join(' ');
  // script gives the command a pseudo-terminal; stdout is redirected to a file inside it.
  const r = spawnSync(script as string, ['-qefc', `${cmd} > '${out}'`, '/dev/null'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stdout);
  assert.match(r.stdout, /bench \[.*\] \d\/2 runs/); // what the terminal showed: stderr
  const doc = checkResults(JSON.parse(readFileSync(out, 'utf8')));
  assert.equal(doc.results.length, 2);
});
