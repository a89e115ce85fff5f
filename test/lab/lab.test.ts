import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanStale, labFromEnv, listLabs, withLab } from '../../src/lab/lab.js';
import { readBufferSysctls } from '../../src/observe/proc.js';

const root = process.getuid?.() === 0;
const skip = !root && 'needs root (network namespaces, tun devices)';
const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** What a lab of `pid` left on the host: namespaces and links. */
function leftovers(pid: number): string[] {
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  const links = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' });
  return `${netns}\n${links}`.split('\n').filter((l) => l.includes(`sbl-${pid}-`));
}

/** A lab held by a child process (`sockbuf lab hold`), up once it has printed its JSON line. */
async function holder(): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'lab', 'hold', '--rtt', '1ms', '--no-measure'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  const r = JSON.parse(line.toString()) as { info?: { pid: number }; error?: string };
  assert.ok(r.info, `lab hold failed: ${r.error}`);
  assert.equal(r.info.pid, child.pid);
  return { child, pid: child.pid as number };
}

test('a lab comes up with the asked round-trip time, a transfer crosses it, nothing is left', {
  skip,
}, async () => {
  const sysctls = readBufferSysctls();
  let pidNetns: string[] = [];
  await withLab({ rttMs: 10 }, async (lab) => {
    pidNetns = leftovers(process.pid);
    assert.ok(pidNetns.length >= 2, 'the namespaces exist while the lab is up');
    assert.deepEqual(labFromEnv(lab.env()), lab.info);
    const m = await lab.measure({ pings: 10, seconds: 0.3 });
    assert.ok(m.rttUs >= 8000 && m.rttUs <= 12000, `rtt ${m.rttUs} µs (kernel, median) for 10 ms asked`);
    assert.ok(m.appRttUs >= m.minRttUs, 'a ping-pong between processes takes at least the link round trip');
    assert.ok(m.bitsPerSecond > 0);
    const s = lab.stats();
    assert.ok(s.forward.bytesOut > 0 && s.reverse.bytesOut > 0);
    assert.ok(s.forward.gsoPackets > 0, 'GSO super-packets crossed');
    const r = await lab.exec('server', ['ip', 'netns', 'identify']);
    assert.equal(r.stdout.trim(), lab.info.hosts.server.netns);
  });
  assert.deepEqual(leftovers(process.pid), []);
  assert.deepEqual(readBufferSysctls(), sysctls);
});

test('an exception in the callback still takes the lab down', { skip }, async () => {
  await assert.rejects(
    withLab({ rttMs: 1 }, async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.deepEqual(leftovers(process.pid), []);
});

test('SIGTERM to the lab process takes its lab down', { skip }, async () => {
  const { child, pid } = await holder();
  assert.ok(leftovers(pid).length >= 2);
  child.kill('SIGTERM');
  const [code, signal] = await once(child, 'exit');
  assert.equal(code ?? signal, 143);
  assert.deepEqual(leftovers(pid), []);
});

test('after SIGKILL, lab down --stale removes the dead lab and leaves a live one alone', {
  skip,
}, async () => {
  const dead = await holder();
  const live = await holder();
  try {
    dead.child.kill('SIGKILL');
    await once(dead.child, 'exit');
    assert.ok(leftovers(dead.pid).length >= 1, 'a SIGKILL leaves the namespaces behind');
    assert.ok(listLabs().some((l) => l.pid === dead.pid && !l.alive));
    const out = execFileSync(process.execPath, ['--import', 'tsx', CLI, 'lab', 'down', '--stale'], {
      encoding: 'utf8',
    });
    assert.match(out, new RegExp(String(dead.pid)));
    assert.deepEqual(leftovers(dead.pid), []);
    assert.ok(leftovers(live.pid).length >= 2, 'the live lab is untouched');
    assert.ok(listLabs().some((l) => l.pid === live.pid && l.alive));
  } finally {
    live.child.kill('SIGTERM');
    await once(live.child, 'exit');
    cleanStale();
  }
  assert.deepEqual(leftovers(live.pid), []);
});
