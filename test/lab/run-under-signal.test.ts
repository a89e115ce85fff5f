// The first signal keeps the results under `lab -- CMD` too (issue 44, item 3): SIGINT or SIGTERM to the
// lab process alone (kill -INT, not the terminal's group-wide Ctrl-C, so the command hears of it only
// through lab) is passed on to the command, which prints its summary; lab then takes its own lab down
// and exits 130/143. Without the forwarding, the sink hears nothing until lab's 5 s force-exit, and
// its summary never comes within the bound. Real namespaces: root only; about 10 s per signal. The lab
// is this test's own (its id is the lab process's pid); it is taken down only by that id.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from '../cli/argv.js';

const skip =
  process.getuid?.() !== 0
    ? 'needs root (network namespaces, tun devices)'
    : spawnSync('ip', ['-V']).status !== 0
      ? 'iproute2 (ip) is missing'
      : false;

/** The namespaces of lab `id` still there. */
const namespacesOf = (id: number) =>
  spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.startsWith(`sbl-${id}-`));

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  test(`${sig} to lab alone, under lab -- sink tcp: passed on, the sink's summary printed, the lab removed`, {
    skip,
    timeout: 90_000,
  }, async (t) => {
    const lab = spawn(
      process.execPath,
      [
        ...SOCKBUF_ARGV,
        'lab',
        '--rtt',
        '1ms',
        '--no-measure',
        '--',
        'sink',
        'tcp',
        '--listen',
        '10.201.0.2:5201',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    const id = lab.pid as number;
    let out = '';
    const exited = new Promise<number | null>((r) => lab.once('exit', (code) => r(code)));
    lab.stdout.on('data', (d) => {
      out += d;
    });
    lab.stderr.on('data', (d) => {
      out += d;
    });
    try {
      // the sink listens in the lab's server host (lab up takes a few seconds on a loaded machine)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line within 60 s: ${out}`)), 60_000);
        lab.stdout.on('data', () => {
          if (/^listening on 10\.201\.0\.2:5201$/m.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        lab.once('exit', () => reject(new Error(`lab exited first: ${out}`)));
      });
      assert.match(out, new RegExp(`lab ${id}: rtt 1 ms`), 'the lab is this process');
      const t0 = Date.now();
      process.kill(id, sig); // the lab process only, not its group
      const code = await Promise.race([
        exited,
        new Promise<'late'>((r) => setTimeout(() => r('late'), 4000)),
      ]);
      const ms = Date.now() - t0;
      t.diagnostic(`lab ended ${ms} ms after ${sig}`);
      assert.notEqual(code, 'late', `lab still running 4 s after ${sig}: ${out}`);
      assert.equal(code, sig === 'SIGINT' ? 130 : 143, out);
      assert.match(out, new RegExp(`^result: 0 connections, .*; stopped by ${sig} \\(0 cut\\)$`, 'm'));
      assert.deepEqual(namespacesOf(id), [], 'its namespaces are gone');
      assert.ok(!existsSync(`/run/sockbuf/lab-${id}.json`), 'its state file is gone');
    } finally {
      try {
        process.kill(-id, 'SIGKILL');
      } catch {
        // gone
      }
      // whatever a failure left of this test's own lab: by its id only
      if (namespacesOf(id).length)
        spawnSync(process.execPath, [...SOCKBUF_ARGV, 'lab', 'down', '--id', String(id)], {
          timeout: 60_000,
        });
    }
  });
}
