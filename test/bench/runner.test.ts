// The runner against real child processes talking over loopback TCP (test/fixtures/bench/end.mjs).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { localPlacement } from '../../src/bench/placement.js';
import { Interrupted, RunFailure, runEnds, runPoints } from '../../src/bench/runner.js';
import type { Ends, Scenario } from '../../src/bench/scenario.js';
import { processRunning } from '../../src/sys/process.js';

const END = fileURLToPath(new URL('../fixtures/bench/end.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const placement = localPlacement();
let n = 0;

/** A fresh pid file; the ends append "ROLE self|grandchild PID" lines to it. */
function pidfile(): string {
  return join(dir, `pids-${n++}`);
}

function pids(file: string): { role: string; what: string; pid: number }[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const [role, what, pid] = l.split(' ');
      return { role, what, pid: Number(pid) };
    });
}

function assertAllGone(file: string, expected: number): void {
  const list = pids(file);
  assert.equal(list.length, expected, `pids recorded: ${JSON.stringify(list)}`);
  for (const p of list) assert.equal(processRunning(p.pid), false, `${p.role} ${p.what} ${p.pid} still runs`);
}

function ends(rx: string[], tx: string[], extra: Partial<Ends> = {}): Ends {
  return {
    receiver: { module: END, args: ['receiver', '--host', '{host}', ...rx] },
    sender: { module: END, args: ['sender', '--host', '{host}', '--port', '{port}', ...tx] },
    ...extra,
  };
}

async function failure(p: Promise<unknown>): Promise<RunFailure> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof RunFailure, String(err));
    return err;
  }
  assert.fail('the run did not fail');
}

test('the sender starts after the ready line and learns the port the receiver got from port 0', async () => {
  const f = pidfile();
  const out = await runEnds(ends(['--grandchild', '--pidfile', f], ['--bytes', '100000', '--pidfile', f]), {
    placement,
    timeoutSeconds: 20,
  });
  assert.equal(out.receiver.ready?.event, 'ready');
  assert.ok(Number(out.receiver.ready?.port) > 0);
  // The sender connected to {port}: the receiver counted exactly what it sent.
  assert.deepEqual(out.receiver.lines.at(-1)?.bytes, 100000);
  assert.deepEqual(out.sender.lines.at(-1), { event: 'result', bytes: 100000, value: 1 });
  assert.equal(out.receiver.code, 0);
  assert.equal(out.sender.code, 0);
  assertAllGone(f, 3); // the receiver's grandchild outlived it, and was killed with its group
});

test('a receiver that is never ready times out; both ends and the grandchild are killed', async () => {
  const f = pidfile();
  const err = await failure(
    runEnds(ends(['--hang', '--grandchild', '--pidfile', f], []), { placement, timeoutSeconds: 1 }),
  );
  assert.match(err.message, /timed out after 1 s waiting for the receiver to be ready/);
  assert.match(err.message, /receiver \d+ starting/); // its stderr
  assert.equal(err.endExitCode, undefined, 'no end exited: a timeout');
  assertAllGone(f, 2);
});

test('a sender that hangs times out; both ends are killed', async () => {
  const f = pidfile();
  const err = await failure(
    // 4 s: time enough for both to start on a busy machine, so the sender is what the run waits for.
    runEnds(ends(['--grandchild', '--pidfile', f], ['--hang', '--pidfile', f]), {
      placement,
      timeoutSeconds: 4,
    }),
  );
  assert.match(
    err.message,
    /timed out after 4 s waiting for the sender to finish \(the receiver was still running, the sender was still running\)/,
  );
  assertAllGone(f, 3);
});

test('a failing sender is named with its stderr, and the receiver is killed', async () => {
  const f = pidfile();
  const err = await failure(
    runEnds(ends(['--grandchild', '--pidfile', f], ['--fail', '1', '--pidfile', f]), {
      placement,
      timeoutSeconds: 20,
    }),
  );
  assert.equal(err.end, 'sender');
  assert.match(err.message, /the sender exited with code 1/);
  assert.match(err.message, /\| sender: failing with code 1 \(test\)/);
  assertAllGone(f, 3);
});

test('a receiver failing mid-run is named, its exit code 3 passed on, and the sender killed', async () => {
  const f = pidfile();
  const err = await failure(
    runEnds(ends(['--fail-after-accept', '3', '--pidfile', f], ['--hang', '--pidfile', f]), {
      placement,
      timeoutSeconds: 20,
    }),
  );
  assert.equal(err.end, 'receiver');
  assert.equal(err.endExitCode, 3);
  assert.match(err.message, /the receiver exited with code 3 while the sender was running/);
  assert.match(err.message, /failing after accept/);
  assertAllGone(f, 2);
});

test('a receiver that exits before it is ready is reported with its code and stderr', async () => {
  const f = pidfile();
  const err = await failure(
    runEnds(ends(['--exit-before-ready', '3', '--pidfile', f], []), { placement, timeoutSeconds: 20 }),
  );
  assert.equal(err.end, 'receiver');
  assert.equal(err.endExitCode, 3);
  assert.match(err.message, /the receiver exited with code 3 before it was ready/);
  assert.match(err.message, /refusing to start/);
  assertAllGone(f, 1);
});

test("receiverStop 'term': the receiver gets SIGTERM after the sender and its last lines are kept", async () => {
  const out = await runEnds(ends(['--wait-term'], ['--bytes', '1000'], { receiverStop: 'term' }), {
    placement,
    timeoutSeconds: 20,
  });
  assert.equal(out.receiver.lines.at(-1)?.bytes, 1000);
});

test('a placeholder the ready line does not fill fails the run before the sender starts', async () => {
  const f = pidfile();
  const bad: Ends = {
    receiver: { module: END, args: ['receiver', '--pidfile', f] },
    sender: { module: END, args: ['sender', '--port', '{nope}'] },
  };
  const err = await failure(runEnds(bad, { placement, timeoutSeconds: 20 }));
  assert.match(err.message, /cannot start the sender: placeholder \{nope\}/);
  assertAllGone(f, 1);
});

test('aborting (what SIGINT/SIGTERM of the runner does) kills both ends before it rejects', async () => {
  const f = pidfile();
  const ctl = new AbortController();
  const run = runEnds(ends(['--grandchild', '--pidfile', f], ['--hang', '--pidfile', f]), {
    placement,
    timeoutSeconds: 20,
    signal: ctl.signal,
  });
  // Abort once both ends have started (the sender writes its pid when it starts).
  while (!safePids(f).some((p) => p.role === 'sender')) await new Promise((r) => setTimeout(r, 20));
  ctl.abort(new Interrupted('SIGINT'));
  await assert.rejects(run, (e: Error) => e instanceof Interrupted && e.signal === 'SIGINT');
  assertAllGone(f, 3);
});

function safePids(file: string) {
  try {
    return pids(file);
  } catch {
    return [];
  }
}

test('runPoints repeats every point and gives median, min and max of each numeric column', async () => {
  const counter = join(dir, 'counter');
  const scenario: Scenario<{ k: number }> = {
    name: 'test',
    description: 'test',
    params: () => ({ k: 1 }),
    points: () => [{ variant: 'a' }, { variant: 'b' }],
    ends: (pt) => ends([], ['--values', '5,1,3', '--counter', `${counter}.${pt.variant}`]),
    row: (out) => ({ value: out.sender.lines.at(-1)?.value as number, note: 'x' }),
  };
  const seen: number[] = [];
  const res = await runPoints(
    scenario,
    { k: 1 },
    {
      placement,
      repeat: 3,
      timeoutSeconds: 20,
      onProgress: (p) => seen.push(p.done),
    },
  );
  assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(
    res.map((r) => [r.name, r.runs.map((x) => x.value), r.median.value, r.min.value, r.max.value]),
    [
      ['a', [5, 1, 3], 3, 1, 5],
      ['b', [5, 1, 3], 3, 1, 5],
    ],
  );
  assert.equal(res[0].runs[0].note, 'x');
});

test('runPoints names the point and run that failed, and a row that cannot be read', async () => {
  const scenario: Scenario = {
    name: 'test',
    description: 'test',
    params: () => ({}),
    points: () => [{ variant: 'a' }],
    ends: () => ends([], []),
    row: () => {
      throw new Error('no result line');
    },
  };
  const err = await failure(runPoints(scenario, {}, { placement, repeat: 2, timeoutSeconds: 20 }));
  assert.match(err.message, /^run 1\/2 of point "a": cannot read its result: no result line/);
});

test('setUp runs before every run of a point, tearDown once at the end, also after a failure', async () => {
  const calls: string[] = [];
  const base: Scenario = {
    name: 'hooks',
    description: 'hooks',
    params: () => ({}),
    points: () => [{ variant: 'a' }, { variant: 'b' }],
    ends: () => ends([], []),
    row: () => ({ value: 1 }),
    setUp: (pt) => {
      calls.push(`set ${pt.variant}`);
    },
    tearDown: () => {
      calls.push('tear');
    },
  };
  await runPoints(base, {}, { placement, repeat: 2, timeoutSeconds: 20 });
  assert.deepEqual(calls, ['set a', 'set b', 'set a', 'set b', 'tear']);
  calls.length = 0;
  const failing: Scenario = { ...base, ends: () => ends([], ['--fail', '1']) };
  await failure(runPoints(failing, {}, { placement, repeat: 2, timeoutSeconds: 20 }));
  assert.deepEqual(calls, ['set a', 'tear']);
});

test('a scenario with search() runs the ends as often as it needs for one row per point and repeat', async () => {
  const counter = join(dir, 'counter-search');
  let calls = 0;
  const scenario: Scenario<{ k: number }> = {
    name: 'test',
    description: 'test',
    params: () => ({ k: 1 }),
    points: () => [{ variant: 'a' }],
    ends: () => ends([], []),
    row: () => assert.fail('row() is not used when search() is given'),
    search: async (_pt, _p, run) => {
      calls++;
      const e = ends([], ['--values', '5,1,3', '--counter', counter]);
      const a = (await run(e)).sender.lines.at(-1)?.value as number;
      const b = (await run(e)).sender.lines.at(-1)?.value as number;
      return { value: a + b };
    },
  };
  const res = await runPoints(scenario, { k: 1 }, { placement, repeat: 1, timeoutSeconds: 20 });
  assert.equal(calls, 1);
  assert.deepEqual(res[0].runs, [{ value: 6 }], 'two runs (values 5 and 1) made one row');
});

test("runPoints leaves the process signals alone; an abort by a signal name (the CLI's) rejects with Interrupted after killing both ends", async () => {
  const f = pidfile();
  const scenario: Scenario<Record<string, never>> = {
    name: 'test',
    description: 'test',
    params: () => ({}),
    points: () => [{ variant: 'a' }],
    ends: () => ends(['--grandchild', '--pidfile', f], ['--hang', '--pidfile', f]),
    row: () => ({}),
  };
  const before = ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s));
  const ctl = new AbortController();
  const run = runPoints(scenario, {}, { placement, repeat: 1, timeoutSeconds: 20, signal: ctl.signal });
  while (!safePids(f).some((p) => p.role === 'sender')) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(
    ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s)),
    before,
    'runPoints installed a signal handler',
  );
  ctl.abort('SIGTERM');
  await assert.rejects(run, (e: Error) => e instanceof Interrupted && e.signal === 'SIGTERM');
  assertAllGone(f, 3);
});
