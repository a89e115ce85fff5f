import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import { ADDRESSES, cleanStale, type Lab, withLab } from '../../src/lab/lab.js';
import { peerRoutes } from '../../src/lab/netns.js';
import { labFromEnv, listLabs } from '../../src/lab/registry.js';
import { readBufferSysctls } from '../../src/observe/proc.js';
import { readSysctlText } from '../../src/sys/sysctl.js';

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
    assert.ok(m.peakBitsPerSecond >= m.bitsPerSecond, JSON.stringify(m));
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

test("a lab installs no signal handler and can be disposed: signals are its caller's", { skip }, () => {
  // in a fresh process: this one's earlier labs would hide a handler installed once per process
  const lab = new URL('../../src/lab/lab.ts', import.meta.url).href;
  const code = [
    `const { Lab } = await import(${JSON.stringify(lab)});`,
    "const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];",
    'const before = signals.map((s) => process.listenerCount(s));',
    'const lab = await Lab.create({ rttMs: 1 });',
    'const after = signals.map((s) => process.listenerCount(s));',
    'await lab[Symbol.asyncDispose]();',
    'console.log(JSON.stringify({ before, after, pid: process.pid }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    encoding: 'utf8',
  });
  const r = JSON.parse(out) as { before: number[]; after: number[]; pid: number };
  assert.deepEqual(r.after, r.before, 'Lab.create added a signal listener');
  assert.deepEqual(leftovers(r.pid), [], 'asyncDispose took the lab down');
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

test('SOCKBUF_LAB that is not a lab (not JSON, nested 100 000 deep, no hosts) is bad usage naming it', () => {
  for (const v of ['{', `${'['.repeat(1e5)}${']'.repeat(1e5)}`, '{"id":"1"}', 'null', '[]']) {
    assert.throws(
      () => labFromEnv({ SOCKBUF_LAB: v }),
      (e: unknown) => e instanceof UsageError && /SOCKBUF_LAB is not a lab's description/.test(e.message),
      v.slice(0, 20),
    );
  }
  assert.equal(labFromEnv({}), undefined);
});

test('the routes that carry the congestion control: IPv4, and IPv6 when the MTU allows it', () => {
  const h = { netns: 'sbl-1-c', dev: 'sbl-1-c', ...ADDRESSES.client };
  const peer = { netns: 'sbl-1-s', dev: 'sbl-1-s', ...ADDRESSES.server };
  const [v4, v6] = peerRoutes(h, peer, 'cubic', true);
  assert.deepEqual(v4, [
    ...['-n', 'sbl-1-c', 'route', 'replace', '10.201.0.2', 'dev', 'sbl-1-c'],
    ...['proto', 'kernel', 'scope', 'link', 'src', '10.201.0.1', 'congctl', 'cubic'],
  ]);
  assert.deepEqual(v6.slice(0, 6), ['-n', 'sbl-1-c', '-6', 'route', 'replace', 'fd00:5b::2']);
  assert.deepEqual(v6.slice(-2), ['congctl', 'cubic']);
  assert.equal(peerRoutes(h, peer, 'reno', false).length, 1);
});

/** The congestion control the kernel gives a TCP connection from the client host to the server host. */
async function congestionAcross(lab: Lab): Promise<string> {
  const to = lab.info.hosts.server.ipv4;
  const server = lab.spawn('server', [
    process.execPath,
    '-e',
    `require('net').createServer((s) => s.resume()).listen(5301, '${to}', () => console.log('up'))`,
  ]);
  try {
    await new Promise<void>((resolve) => server.onLine(() => resolve()));
    const client = `const s = require('net').connect(5301, '${to}', () => {
      process.stdout.write(require('child_process').execFileSync('ss', ['-tinH', 'dst', '${to}']));
      s.destroy();
    });`;
    const r = await lab.exec('client', [process.execPath, '-e', client], { timeoutMs: 20_000 });
    assert.equal(r.code, 0, r.stderr);
    const known = ['cubic', 'reno', 'bbr'].find((cc) => new RegExp(`\\s${cc}\\s`).test(r.stdout));
    assert.ok(known, `ss shows the congestion control: ${r.stdout}`);
    return known;
  } finally {
    await server.stop(2);
  }
}

test("TCP across the lab uses the lab's congestion control (cubic by default), the host's with 'host'", {
  skip,
}, async () => {
  await withLab({ rttMs: 1 }, async (lab) => {
    assert.equal(lab.info.congestion, 'cubic');
    assert.equal(lab.info.congestionFrom, 'lab');
    assert.equal(await congestionAcross(lab), 'cubic');
  });
  await withLab({ rttMs: 1, congestion: 'reno' }, async (lab) => {
    assert.equal(await congestionAcross(lab), 'reno');
  });
  const hostDefault = readSysctlText('net.ipv4.tcp_congestion_control');
  await withLab({ rttMs: 1, congestion: 'host' }, async (lab) => {
    assert.equal(lab.info.congestion, hostDefault);
    assert.equal(lab.info.congestionFrom, 'host');
    assert.equal(await congestionAcross(lab), hostDefault);
  });
  assert.deepEqual(leftovers(process.pid), []);
});

test('a congestion control this kernel lacks: exit 3 naming it, nothing left behind', { skip }, async () => {
  await assert.rejects(
    withLab({ rttMs: 1, congestion: 'nosuchcc' }, async () => {}),
    (e: Error) => {
      assert.ok(e instanceof EnvironmentError);
      assert.match(e.message, /congestion control 'nosuchcc'/);
      return true;
    },
  );
  assert.deepEqual(leftovers(process.pid), []);
});

test('lab down takes down labs made by lab up, never a lab another process made for itself', {
  skip,
}, async () => {
  const held = await holder();
  try {
    await withLab({ rttMs: 1 }, async () => {
      const down = (id: number) =>
        execFileSync(process.execPath, ['--import', 'tsx', CLI, 'lab', 'down', '--id', String(id)], {
          encoding: 'utf8',
        });
      assert.match(down(process.pid), /nothing to remove/);
      assert.ok(leftovers(process.pid).length >= 2, "this process's lab is untouched");
      assert.match(down(held.pid), new RegExp(`removed lab ${held.pid}`));
      await once(held.child, 'exit');
      assert.deepEqual(leftovers(held.pid), []);
    });
  } finally {
    held.child.kill('SIGTERM');
  }
  assert.deepEqual(leftovers(process.pid), []);
});
