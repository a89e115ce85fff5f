// The process layer against real children: node scripts, sockbuf itself (from the sources and from
// dist/, which `npm test` builds first), a grandchild, SIGKILL of a parent.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FROM_SOURCE, moduleFile, sockbufEntry, VERSION } from '../../src/sys/package.js';
import {
  alive,
  Child,
  CommandError,
  nodeCommand,
  processRunning,
  run,
  runInherit,
  runningInGroup,
  runSync,
  sockbufCommand,
  which,
} from '../../src/sys/process.js';

const node = (code: string) => nodeCommand('-e', [code]);

async function gone(pid: number, ms = 5000): Promise<boolean> {
  for (let t = 0; t < ms; t += 20) {
    if (!processRunning(pid)) return true;
    await sleep(20);
  }
  return false;
}

test('the package layout is decided once: sources here, the CLI entry, modules, scenarios and package.json found', async () => {
  assert.equal(FROM_SOURCE, true);
  assert.ok(existsSync(sockbufEntry()), sockbufEntry());
  assert.ok(sockbufEntry().endsWith('/src/cli/main.ts'));
  assert.ok(existsSync(moduleFile(new URL('../../src/lab/link-probe.child', import.meta.url))));
  const { scenarioNames, loadScenario } = await import('../../src/bench/scenario-registry.js');
  assert.ok(scenarioNames().includes('ping'));
  const idle = await loadScenario('idle');
  const ends = idle.ends({ reader: 'adaptive' }, { readers: ['adaptive'], conns: 1, burst: 1 });
  const end = (ends.receiver as { module: string }).module;
  assert.ok(end.endsWith('/src/ends/bench-tcp.child.ts') && existsSync(end), end);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(VERSION, pkg.version);
});

test('sockbuf itself runs as a child (through tsx from the sources) and prints its version', async () => {
  const r = await run(sockbufCommand(['--version']));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), VERSION);
});

const DIST = new URL('../../dist/sys/process.js', import.meta.url);
test('from dist/: the same paths resolve to the built .js (CLI entry, lab probe, scenario folder, end modules), and the built CLI runs', {
  skip: existsSync(DIST) ? false : 'dist/ not built (npm run build)',
}, async () => {
  const code = `const p = await import(${JSON.stringify(DIST.href)}); const k = await import(${JSON.stringify(new URL('../../dist/sys/package.js', import.meta.url).href)});
    const r = await p.run(p.sockbufCommand(['--version']));
    const reg = await import(${JSON.stringify(new URL('../../dist/bench/scenario-registry.js', import.meta.url).href)});
    const idle = await reg.loadScenario('idle');
    const ends = idle.ends({ reader: 'adaptive' }, { readers: ['adaptive'], conns: 1, burst: 1 });
    console.log(JSON.stringify({ entry: k.sockbufEntry(), probe: k.moduleFile(new URL('../lab/link-probe.child', ${JSON.stringify(DIST.href)})), version: k.VERSION, fromSource: k.FROM_SOURCE, out: r.stdout, args: p.sockbufCommand([]).args, scenarios: reg.scenarioNames(), end: ends.receiver.module }));`;
  const r = await run(nodeCommand('--input-type=module', ['-e', code]));
  assert.equal(r.code, 0, r.stderr);
  const got = JSON.parse(r.stdout);
  assert.equal(got.fromSource, false);
  assert.ok(got.entry.endsWith('/dist/cli/main.js'), got.entry);
  assert.ok(existsSync(got.probe), got.probe);
  assert.equal(got.out.trim(), VERSION);
  assert.equal(got.version, VERSION);
  assert.ok(!got.args.includes('--import'), 'dist runs without tsx');
  for (const name of ['drain', 'idle', 'ping', 'tcp', 'udp']) assert.ok(got.scenarios.includes(name), name);
  assert.ok(got.end.endsWith('/dist/ends/bench-tcp.child.js') && existsSync(got.end), got.end);
});

test('stdout is read as lines (also split across writes, CRLF, no final newline); a line too long is skipped', async () => {
  const c = new Child(
    node(
      "process.stdout.write('a'); setTimeout(() => { process.stdout.write('b\\r\\nxxxxxxxxxx\\nc\\n'); process.stdout.write('end') }, 50)",
    ),
    { maxLine: 5 },
  );
  const lines: string[] = [];
  c.onLine((l) => lines.push(l));
  assert.deepEqual(await c.exited, { code: 0, signal: null });
  assert.deepEqual(lines, ['ab', 'c', 'end']);
});

test('the last stderr lines are kept, the exit is described', async () => {
  const c = new Child(node("for (let i = 0; i < 30; i++) console.error('line ' + i); process.exit(3)"), {
    stderrTail: 5,
  });
  const exit = await c.exited;
  assert.deepEqual(exit, { code: 3, signal: null });
  assert.deepEqual(c.stderrTail, ['line 25', 'line 26', 'line 27', 'line 28', 'line 29']);
  assert.equal(c.describeExit(), 'exited with code 3');
  assert.equal(c.running, false);
});

test('a command that cannot start is reported, not thrown', async () => {
  const c = new Child({ file: '/nonexistent/sockbuf-no-such-file', args: [] });
  await c.exited;
  assert.equal(c.running, false);
  assert.match(c.stderrTail.join('\n'), /nonexistent/);
});

test('stop() kills the whole group (a grandchild too) and reaps it', async () => {
  const c = new Child(
    node(
      "const { spawn } = require('node:child_process'); const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log(g.pid); setInterval(() => {}, 1000)",
    ),
  );
  const grandchild = await new Promise<number>((resolve) => c.onLine((l) => resolve(Number(l))));
  const pid = c.pid as number;
  assert.ok(processRunning(grandchild));
  assert.deepEqual(runningInGroup(pid).sort(), [pid, grandchild].sort());
  const exit = await c.stop();
  assert.equal(exit.signal, 'SIGKILL');
  assert.equal(processRunning(grandchild), false);
  assert.deepEqual(runningInGroup(pid), []);
});

test('stop(grace) sends SIGTERM first and SIGKILL only after the grace', async () => {
  const term = new Child(
    node(
      "process.on('SIGTERM', () => { console.log('term'); process.exit(0) }); setInterval(() => {}, 1000); console.log('up')",
    ),
  );
  await new Promise<void>((resolve) => term.onLine((l) => l === 'up' && resolve()));
  assert.deepEqual(await term.stop(5), { code: 0, signal: null });
  const stubborn = new Child(
    node("process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('up')"),
  );
  await new Promise<void>((resolve) => stubborn.onLine((l) => l === 'up' && resolve()));
  const t0 = Date.now();
  assert.deepEqual(await stubborn.stop(0.3), { code: null, signal: 'SIGKILL' });
  assert.ok(Date.now() - t0 >= 250, `killed after ${Date.now() - t0} ms`);
});

test('a child dies with its parent, even when the parent is SIGKILLed (parent-death signal)', {
  skip: which('setpriv') ? false : 'setpriv (util-linux) not on PATH',
}, async () => {
  // the parent (under tsx) starts a sleeping child through the process layer and prints its pid
  const mod = JSON.stringify(new URL('../../src/sys/process.ts', import.meta.url).href);
  const parent = new Child(
    nodeCommand('--import', [
      'tsx',
      '--input-type=module',
      '-e',
      `const { Child, nodeCommand } = await import(${mod}); const c = new Child(nodeCommand('-e', ['setInterval(() => {}, 1000)']), { group: false }); console.log(c.pid); setInterval(() => {}, 1000);`,
    ]),
  );
  const child = await new Promise<number>((resolve) => parent.onLine((l) => resolve(Number(l))));
  assert.ok(processRunning(child));
  parent.signal('SIGKILL');
  await parent.exited;
  assert.ok(await gone(child), `child ${child} outlived its SIGKILLed parent`);
});

test('run() collects output; runInherit() gives the exit status; runSync() throws CommandError with stderr', async () => {
  const r = await run(node("console.log('out'); console.error('err'); process.exit(4)"));
  assert.deepEqual(r, { code: 4, stdout: 'out', stderr: 'err' });
  const slow = await run(node('setInterval(() => {}, 1000)'), 200);
  assert.equal(slow.code, 128);
  assert.equal(await runInherit(node('process.exit(5)')), 5);
  assert.equal(runSync(process.execPath, ['-e', "process.stdout.write('hi')"]), 'hi');
  assert.throws(
    () => runSync(process.execPath, ['-e', "console.error('bad thing'); process.exit(2)"]),
    (err: unknown) => err instanceof CommandError && err.status === 2 && err.stderr === 'bad thing',
  );
  assert.throws(() => runSync('/nonexistent/sockbuf-no-such-file', []), CommandError);
});

test('alive() sees this process, not a reaped child, and not a zombie', async () => {
  assert.equal(alive(process.pid), true);
  const c = new Child(node(''));
  await c.exited;
  assert.equal(alive(c.pid as number), false);
  // a grandchild whose parent does not reap it (its event loop is blocked) is a zombie: dead to alive()
  const parent = new Child(
    node(
      "const { spawn } = require('node:child_process'); const g = spawn('true', { stdio: 'ignore' }); process.stdout.write(g.pid + '\\n'); require('node:child_process').execSync('sleep 0.3'); console.log('zombie'); require('node:child_process').execSync('sleep 5')",
    ),
  );
  const lines: string[] = [];
  await new Promise<void>((resolve) => parent.onLine((l) => lines.push(l) === 2 && resolve()));
  const zombie = Number(lines[0]);
  assert.match(readFileSync(`/proc/${zombie}/stat`, 'utf8'), /\) Z /);
  assert.equal(alive(zombie), false);
  await parent.stop();
});
