import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import {
  addPlacementOptions,
  localPlacement,
  PLACEMENTS,
  parseCpuList,
  resolvePlacement,
  which,
} from '../../src/bench/placement.js';
import { EnvironmentError, UsageError } from '../../src/policy/units.js';

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

test('lab refuses with exit 3 until its issue lands', async () => {
  for (const name of ['lab'] as const) {
    await assert.rejects(resolvePlacement(name), (e: Error) => {
      assert.ok(e instanceof EnvironmentError);
      assert.equal(e.exitCode, 3);
      assert.match(e.message, new RegExp(`--placement ${name}`));
      return true;
    });
  }
});

test('a placement kind adds its options to bench commands and is made from the parsed options', async () => {
  const saved = PLACEMENTS.lab;
  try {
    PLACEMENTS.lab = {
      options: (cmd) => cmd.option('--lab-name <name>', 'which lab'),
      create: (o) => ({ ...localPlacement([0], null), name: 'lab', host: String(o.labName) }),
    };
    const cmd = addPlacementOptions(new Command('x'));
    cmd.parse(['--lab-name', '10.7.0.1'], { from: 'user' });
    const p = await resolvePlacement('lab', cmd.opts());
    assert.equal(p.name, 'lab');
    assert.equal(p.host, '10.7.0.1');
  } finally {
    PLACEMENTS.lab = saved;
  }
});
