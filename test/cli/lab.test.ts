import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { placementOf } from '../../src/cli/lab.js';
import { SOCKBUF_ARGV } from './argv.js';

const root = process.getuid?.() === 0;

function sockbuf(args: string[], prefix: string[] = []) {
  const argv = [...prefix, process.execPath, ...SOCKBUF_ARGV, ...args];
  return spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
}

function netns(): string {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
}

test('sink runs in the server host, blast in the client host, the rest in the root namespace', () => {
  assert.equal(placementOf(['sink', 'tcp']), 'server');
  assert.equal(placementOf(['blast', 'tcp']), 'client');
  assert.equal(placementOf(['bench', 'tcp']), 'root');
});

test('a bad lab value exits 2 naming the option, and leaves nothing behind', () => {
  const before = netns();
  for (const [opt, value] of [
    ['--rtt', '2'],
    ['--bandwidth', 'lots'],
    ['--loss', '200%'],
    ['--mtu', '70000'],
    ['--congestion', 'Bad!'],
  ]) {
    const r = sockbuf(['lab', opt, value, '--', 'lab', 'status']);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${opt}: '${value.replace('%', '%')}'`));
  }
  assert.equal(netns(), before);
});

test('not root: exit 3 with the reason', { skip: !root && 'needs root to drop root' }, () => {
  const r = sockbuf(
    ['lab', '--rtt', '2ms', '--', 'lab', 'status'],
    ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
  );
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /root/);
});

test('lab -- CMD runs the command with the lab in its environment, then takes the lab down', {
  skip: !root && 'needs root',
}, () => {
  const r = sockbuf(['lab', '--rtt', '1ms', '--no-measure', '--', 'lab', 'status', '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /delay line: userspace-tun, GSO passthrough on/);
  const labs = JSON.parse(r.stdout) as { pid: number; alive: boolean }[];
  const mine = labs.find((l) => l.alive);
  assert.ok(mine, 'the lab was up while the command ran');
  assert.doesNotMatch(netns(), new RegExp(`sbl-${mine.pid}-`));
});
