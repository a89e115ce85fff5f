// Fault: the process that holds a lab is killed with SIGKILL (no handler runs). What it left — its
// namespaces and state file — is removed by the next lab command, and nothing of a live lab is touched.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { listLabs } from '../../src/lab/registry.js';
import { MAIN } from './helpers.js';

const skip = process.getuid?.() !== 0 && 'needs root (network namespaces, tun devices)';
const sockbuf = (...args: string[]) =>
  execFileSync(process.execPath, ['--import', 'tsx', MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });

function leftovers(pid: number): string[] {
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  const links = execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' });
  return `${netns}\n${links}`.split('\n').filter((l) => l.includes(`sbl-${pid}-`));
}

/** `sockbuf lab up`, and the pid of the process that holds the new lab (other labs may come and go). */
function labUp(): number {
  const { pid } = JSON.parse(sockbuf('lab', 'up', '--rtt', '1ms', '--no-measure', '--json')) as {
    pid: number;
  };
  assert.ok(
    listLabs().some((l) => l.alive && l.pid === pid),
    'the new lab is up',
  );
  return pid;
}

test('a lab holder killed with SIGKILL: the next lab command removes what it left', {
  skip,
  timeout: 120_000,
}, async () => {
  const dead = labUp();
  let next: number | undefined;
  try {
    process.kill(dead, 'SIGKILL');
    for (let i = 0; i < 100 && listLabs().some((l) => l.pid === dead && l.alive); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(leftovers(dead).length >= 1, 'SIGKILL left namespaces behind (no handler ran)');
    next = labUp(); // the next lab command
    assert.deepEqual(leftovers(dead), [], 'the dead lab is gone');
    assert.ok(!listLabs().some((l) => l.pid === dead), 'and its state file');
    assert.ok(leftovers(next).length >= 2, 'the new lab is up');
  } finally {
    if (next !== undefined) sockbuf('lab', 'down', '--id', String(next));
    sockbuf('lab', 'down', '--stale');
  }
  if (next !== undefined) assert.deepEqual(leftovers(next), []);
  assert.deepEqual(leftovers(dead), []);
});
