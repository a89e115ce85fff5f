// Labs on a shared host (issue 44, item 1): `lab down` takes the only lab up, refuses when several are
// up unless --id or --all names them, and `lab up` interrupted removes what it made before it exits.
// The real tests need root (namespaces, tun devices). The one with several labs runs in a mount
// namespace of its own with fresh /run/netns and /run/sockbuf, so that its `lab down` and `--all`
// see only the two labs it made (never another user's on this host); about 5 s.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../../src/errors.js';
import { chooseLabsToDown } from '../../src/lab/hold.js';
import type { LabInfo, LabListing } from '../../src/lab/registry.js';
import { parseProcStat, processRunning } from '../../src/sys/process.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';

const skip = process.getuid?.() !== 0 && 'needs root (network namespaces, tun devices)';
const noUnshare = spawnSync('unshare', ['--version']).status !== 0 && 'needs unshare (util-linux)';

const listing = (pid: number, rttMs: number): LabListing => ({
  id: String(pid),
  pid,
  alive: true,
  netns: [`sbl-${pid}-c`, `sbl-${pid}-s`],
  info: { id: String(pid), pid, rttMs, held: true } as LabInfo,
});

test('lab down: the only lab, the one named, every one with --all; several and no choice: a usage error listing them', () => {
  const a = listing(4242, 2);
  const b = listing(4343, 5);
  assert.deepEqual(chooseLabsToDown([a]), [a]);
  assert.deepEqual(chooseLabsToDown([]), []);
  assert.deepEqual(chooseLabsToDown([a, b], { id: '4343' }), [b]);
  assert.deepEqual(chooseLabsToDown([a, b], { all: true }), [a, b]);
  assert.throws(
    () => chooseLabsToDown([a, b]),
    (e: unknown) =>
      e instanceof UsageError &&
      /several labs are up: 4242 \(rtt 2 ms\), 4343 \(rtt 5 ms\); choose one with id .*, or take every one down with all/.test(
        e.message,
      ),
  );
  assert.throws(() => chooseLabsToDown([a, b], { id: '4242', all: true }), UsageError);
});

test('two lab up, then lab down: refused with exit 2 and both stay; lab down --all removes both and names them', {
  skip: skip || noUnshare,
  timeout: 90_000,
}, () => {
  const sockbuf = [process.execPath, ...SOCKBUF_ARGV].map((a) => `'${a}'`).join(' ');
  // its own /run/netns and /run/sockbuf: the labs of this host's other users are out of its sight
  const script = `
set -u
mkdir -p /run/netns /run/sockbuf
mount -t tmpfs sbl-test /run/netns && mount -t tmpfs sbl-test /run/sockbuf || exit 97
S() { ${sockbuf} "$@"; }
S lab up --rtt 1ms --no-measure --json >/dev/null || exit 98
S lab up --rtt 3ms --no-measure --json >/dev/null || exit 98
echo "labs-before $(ls /run/netns | tr '\\n' ' ')"
S lab down; echo "down-rc $?"
echo "labs-after-down $(ls /run/netns | tr '\\n' ' ')"
S lab down --all; echo "all-rc $?"
echo "labs-after-all $(ls /run/netns | tr '\\n' ' ')"
`;
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', script], {
    encoding: 'utf8',
    timeout: 80_000,
  });
  const out = r.stdout;
  const field = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(out)?.[1]?.trim() ?? '';
  assert.equal(r.status, 0, `${out}\n${r.stderr}`);
  const before = field('labs-before').split(' ');
  assert.equal(before.length, 4, out);
  assert.equal(field('down-rc'), '2', out);
  assert.match(r.stderr, /several labs are up: \d+ \(rtt 1 ms\), \d+ \(rtt 3 ms\); choose one with --id/);
  assert.deepEqual(field('labs-after-down').split(' '), before, 'both labs are still there');
  assert.equal(field('all-rc'), '0', out);
  const ids = [...new Set(before.map((n) => n.split('-')[1]))];
  assert.match(out, new RegExp(`removed lab ${ids.join(', ')}`));
  assert.equal(field('labs-after-all'), '', 'lab down --all removed both');
  for (const id of ids) assert.ok(!processRunning(Number(id)), `holder ${id} exited`);
});

function parentOf(pid: number): number | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.ppid;
  } catch {
    return undefined;
  }
}

/** The lab namespaces named after `pid`. */
const netnsOf = (pid: number) =>
  existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => n.startsWith(`sbl-${pid}-`)) : [];

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  test(`${sig} to lab up once its holder made the namespaces: lab up removes them before it exits`, {
    skip,
    timeout: 90_000,
  }, async () => {
    const before = new Set(existsSync('/run/netns') ? readdirSync('/run/netns') : []);
    const up = spawn(process.execPath, [...SOCKBUF_ARGV, 'lab', 'up', '--rtt', '1ms'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    up.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => up.once('exit', (code) => r(code)));
    let holder: number | undefined;
    try {
      // the holder's namespaces appear ~0.5 s in (from dist), while the self-check has not ended
      for (const t0 = Date.now(); holder === undefined; await sleep(20)) {
        assert.ok(Date.now() - t0 < 30_000, 'the holder made its namespaces within 30 s');
        holder = (existsSync('/run/netns') ? readdirSync('/run/netns') : [])
          .filter((n) => !before.has(n) && /^sbl-\d+-s$/.test(n))
          .map((n) => Number(n.split('-')[1]))
          .find((p) => parentOf(p) === up.pid);
      }
      const t0 = Date.now();
      up.kill(sig);
      const code = await exited;
      assert.equal(code, sig === 'SIGINT' ? 130 : 143, stderr);
      assert.ok(Date.now() - t0 < 6000, `lab up ended within 6 s (${Date.now() - t0} ms)`);
      // checked at once: no other lab command has had a chance to clean up after it
      assert.deepEqual(netnsOf(holder), [], 'its namespaces were removed before lab up exited');
      assert.ok(!existsSync(`/run/sockbuf/lab-${holder}.json`), 'its state file was removed');
      assert.match(stderr, /interrupted/);
    } finally {
      up.kill('SIGKILL');
      if (holder !== undefined && netnsOf(holder).length)
        spawnSync(process.execPath, [...SOCKBUF_ARGV, 'lab', 'down', '--stale']);
    }
  });
}
