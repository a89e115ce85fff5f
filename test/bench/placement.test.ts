import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseOptionArgv } from '../../src/bench/options.js';
import {
  labPlacement,
  localPlacement,
  PLACEMENTS,
  parseCpuList,
  placementOptions,
  resolvePlacement,
  which,
} from '../../src/bench/placement.js';
import { runEnds } from '../../src/bench/runner.js';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import { ADDRESSES, withLab } from '../../src/lab/lab.js';
import { LAB_ENV, type LabInfo } from '../../src/lab/registry.js';

test('parseCpuList expands ranges', () => {
  assert.deepEqual(parseCpuList('0-3,6,8-9\n'), [0, 1, 2, 3, 6, 8, 9]);
  assert.deepEqual(parseCpuList('1'), [1]);
});

test('local pins the receiver and the sender to two different CPUs through taskset', () => {
  const p = localPlacement([2, 5], '/usr/bin/taskset');
  assert.equal(p.host, '127.0.0.1');
  assert.deepEqual(p.command('receiver', { file: 'node', args: ['a'] }), {
    file: '/usr/bin/taskset',
    args: ['-c', '2', 'node', 'a'],
  });
  assert.deepEqual(p.command('sender', { file: 'node', args: [] }).args.slice(0, 2), ['-c', '5']);
  assert.deepEqual(p.describe(), { name: 'local', cpus: { receiver: 2, sender: 5 } });
});

test('local runs unpinned, and says why, with one CPU or without taskset', () => {
  const spec = { file: 'node', args: ['a'] };
  assert.deepEqual(localPlacement([0], '/usr/bin/taskset').command('sender', spec), spec);
  assert.equal(localPlacement([0], '/usr/bin/taskset').describe().unpinned, 'one CPU');
  assert.equal(localPlacement([0, 1], null).describe().unpinned, 'taskset not found');
});

test('which finds executables on PATH only', () => {
  assert.equal(which('sh', '/nonexistent:/bin'), '/bin/sh');
  assert.equal(which('no-such-tool-sockbuf', '/bin'), undefined);
});

test('--placement remote without --remote HOST is a usage error naming --remote', async () => {
  await assert.rejects(
    resolvePlacement('remote'),
    (e: Error) => e instanceof UsageError && /--remote HOST\[:PORT\]/.test(e.message),
  );
  const p = await resolvePlacement('remote', { remote: '10.0.0.2' });
  assert.deepEqual([p.name, p.host], ['remote', '10.0.0.2']);
});

test('a placement kind adds its options to bench commands and is made from the parsed options', async () => {
  const saved = PLACEMENTS.lab;
  try {
    PLACEMENTS.lab = {
      options: [{ flags: '--lab-name <name>', description: 'which lab' }],
      create: (o) => ({ ...localPlacement([0], null), name: 'lab', host: String(o.labName) }),
    };
    const specs = placementOptions();
    assert.ok(specs.some((s) => s.flags === '--remote <host[:port]>'));
    const p = await resolvePlacement('lab', parseOptionArgv(specs, ['--lab-name', '10.7.0.1']));
    assert.equal(p.name, 'lab');
    assert.equal(p.host, '10.7.0.1');
  } finally {
    PLACEMENTS.lab = saved;
  }
});

const info: LabInfo = {
  id: '42',
  pid: 42,
  rttMs: 2,
  bitsPerSecond: 5e9,
  loss: 0,
  mtu: 1500,
  mode: 'userspace-tun, GSO passthrough on, 2 threads, MTU 1500',
  hosts: {
    client: { netns: 'sbl-42-c', dev: 'sbl-42-c', ...ADDRESSES.client },
    server: { netns: 'sbl-42-s', dev: 'sbl-42-s', ...ADDRESSES.server },
  },
};

test('lab runs the receiver in the server namespace and the sender in the client namespace', () => {
  const p = labPlacement(info);
  assert.equal(p.host, '10.201.0.2');
  const r = p.command('receiver', { file: 'node', args: ['a'], env: { X: '1' } });
  assert.deepEqual([r.file, ...r.args], ['ip', 'netns', 'exec', 'sbl-42-s', 'node', 'a']);
  assert.equal(r.env?.X, '1');
  assert.deepEqual(JSON.parse(r.env?.[LAB_ENV] ?? ''), info);
  assert.deepEqual(p.command('sender', { file: 'node', args: [] }).args.slice(0, 3), [
    'netns',
    'exec',
    'sbl-42-c',
  ]);
  assert.equal(p.describe().mode, info.mode);
  assert.equal(p.describe().rttUs, 2000);
});

test('lab refuses with exit 3 when no lab is up', {
  skip: !!process.env[LAB_ENV] && 'runs under a lab',
}, async () => {
  const up = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (/sbl-\d+-s/.test(up)) return; // someone's lab is up on this host: then lab placement finds it
  await assert.rejects(resolvePlacement('lab'), (e: Error) => {
    assert.ok(e instanceof EnvironmentError);
    assert.match(e.message, /--placement lab: no lab is up/);
    return true;
  });
});

test('a run across a real lab: the ends meet at the server address', {
  skip: process.getuid?.() !== 0 && 'needs root',
}, async () => {
  const END = fileURLToPath(new URL('../fixtures/bench/end.mjs', import.meta.url));
  await withLab({ rttMs: 4 }, async (lab) => {
    const out = await runEnds(
      {
        receiver: { module: END, args: ['receiver', '--host', '{host}'] },
        sender: {
          module: END,
          args: ['sender', '--host', '{host}', '--port', '{port}', '--bytes', '1000000'],
        },
      },
      { placement: labPlacement(lab.info), timeoutSeconds: 30 },
    );
    assert.equal(out.receiver.lines.at(-1)?.bytes, 1000000);
    assert.equal(out.sender.code, 0);
    assert.ok(lab.stats().forward.bytesOut >= 1000000, 'the bytes crossed the delay line');
  });
});
