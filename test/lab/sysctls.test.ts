import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  changeSysctls,
  liveSysctlChanges,
  pendingSysctls,
  restoreStaleSysctls,
  restoreSysctls,
} from '../../src/lab/sysctls.js';

// A fake /proc and state directory: the real host's sysctls are shared with everyone's tests.
let dir = '';
const value = (name: string) => readFileSync(join(dir, 'proc/sys/net/core', name), 'utf8').trim();

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sockbuf-sysctl-'));
  mkdirSync(join(dir, 'proc/sys/net/core'), { recursive: true });
  writeFileSync(join(dir, 'proc/sys/net/core/rmem_max'), '229376\n');
  writeFileSync(join(dir, 'proc/sys/net/core/wmem_max'), '229376\n');
  process.env.SOCKBUF_PROC_ROOT = join(dir, 'proc');
  process.env.SOCKBUF_STATE_DIR = join(dir, 'state');
});
after(() => {
  delete process.env.SOCKBUF_PROC_ROOT;
  delete process.env.SOCKBUF_STATE_DIR;
  rmSync(dir, { recursive: true, force: true });
});

test('changes are saved before they are made, the first original wins, restore puts them back', () => {
  changeSysctls({ 'net.core.rmem_max': 1048576, 'net.core.wmem_max': 1048576 });
  assert.equal(value('rmem_max'), '1048576');
  changeSysctls({ 'net.core.rmem_max': 4194304 });
  assert.equal(value('rmem_max'), '4194304');
  assert.deepEqual(pendingSysctls()?.original, {
    'net.core.rmem_max': '229376',
    'net.core.wmem_max': '229376',
  });
  assert.deepEqual(restoreSysctls().sort(), ['net.core.rmem_max', 'net.core.wmem_max']);
  assert.equal(value('rmem_max'), '229376');
  assert.equal(value('wmem_max'), '229376');
  assert.equal(pendingSysctls(), undefined);
});

test('an unknown sysctl is refused before anything changes', () => {
  assert.throws(() => changeSysctls({ 'net.core.rmem_max': 1, 'net.core.nope': 1 }), /nope/);
  assert.equal(value('rmem_max'), '229376');
  restoreSysctls();
});

test('what a killed process changed is restored by the next command; a live one is left alone', async () => {
  const mod = fileURLToPath(new URL('../../src/lab/sysctls.ts', import.meta.url));
  const code = `const m = await import(${JSON.stringify(mod)}); m.changeSysctls({ 'net.core.rmem_max': 8388608 }); console.log('changed'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    env: process.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await once(child.stdout as NodeJS.ReadableStream, 'data');
    assert.equal(value('rmem_max'), '8388608');
    assert.deepEqual(restoreStaleSysctls(), [], 'the changer still runs');
    assert.equal(value('rmem_max'), '8388608');
    // another benchmark sees the live change (and refuses); the changer itself is not "another"
    assert.deepEqual(liveSysctlChanges(), [{ pid: child.pid, original: { 'net.core.rmem_max': '229376' } }]);
    assert.deepEqual(liveSysctlChanges(child.pid), []);
    // changing the same sysctl meanwhile is refused before anything is written (its "original" would be
    // the other's temporary value); another sysctl is not the other's
    assert.throws(() => changeSysctls({ 'net.core.rmem_max': 1048576 }), {
      code: 'ERR_SOCKBUF_ENVIRONMENT',
      message: /net\.core\.rmem_max is being changed by process \d+ \(its original: 229376\)/,
    });
    assert.equal(value('rmem_max'), '8388608');
    assert.equal(pendingSysctls(), undefined);
    changeSysctls({ 'net.core.wmem_max': 1048576 });
    assert.equal(value('wmem_max'), '1048576');
    restoreSysctls();
    assert.equal(value('wmem_max'), '229376');
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.deepEqual(liveSysctlChanges(), [], 'a dead changer is stale, not live');
    assert.deepEqual(restoreStaleSysctls(), [`${child.pid}: net.core.rmem_max`]);
    assert.equal(value('rmem_max'), '229376');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); // a failed assertion never leaves it running
  }
});
