import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { placementOf } from '../../src/lab/hold.js';
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
  // other labs may be up meanwhile (tests run side by side): the new one is this command's
  const before = new Set(netns().match(/sbl-\d+-/g) ?? []);
  const r = sockbuf(['lab', '--rtt', '1ms', '--no-measure', '--', 'lab', 'status', '--json']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /delay line: userspace-tun, GSO passthrough on/);
  const labs = JSON.parse(r.stdout) as { pid: number; alive: boolean }[];
  const mine = labs.find((l) => l.alive && !before.has(`sbl-${l.pid}-`));
  assert.ok(mine, 'the lab was up while the command ran');
  assert.doesNotMatch(netns(), new RegExp(`sbl-${mine.pid}-`));
});

test('lab exec HOST -- sockbuf … runs this sockbuf with no sockbuf on PATH (in the host namespace)', {
  skip: !root && 'needs root',
  timeout: 120_000,
}, () => {
  const up = sockbuf(['lab', 'up', '--rtt', '1ms', '--no-measure', '--json']);
  assert.equal(up.status, 0, up.stderr);
  const id = String(JSON.parse(up.stdout).id);
  try {
    // PATH without any sockbuf: `ip` is all lab exec needs from it
    const env = { ...process.env, PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
    const argv = [...SOCKBUF_ARGV, 'lab', 'exec', '--id', id, 'server', '--', 'sockbuf', 'inspect', '--json'];
    const r = spawnSync(process.execPath, argv, { encoding: 'utf8', timeout: 60_000, env });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /exec of sockbuf failed|ENOENT/);
    JSON.parse(r.stdout); // sockbuf's own JSON, from inside the server namespace
    const v = spawnSync(process.execPath, [...argv.slice(0, -3), 'sockbuf', '--version'], {
      encoding: 'utf8',
      env,
    });
    assert.equal(v.status, 0, v.stderr);
    assert.match(v.stdout, /^\d+\.\d+\.\d+/);
    // any other program is run as given, from PATH
    const ns = spawnSync(process.execPath, [...argv.slice(0, -3), 'ip', 'netns', 'identify'], {
      encoding: 'utf8',
      env,
    });
    assert.equal(ns.status, 0, ns.stderr);
    assert.match(ns.stdout, new RegExp(`sbl-${id}-s`));
  } finally {
    sockbuf(['lab', 'down', '--id', id]);
  }
});
