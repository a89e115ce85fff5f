import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const sockbuf = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { encoding: 'utf8' });

test('bench --help shows the quick suite and its options', () => {
  const r = sockbuf('bench', '--help');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /sockbuf bench \[--full\] \[--only IDS\]/);
  assert.match(r.stdout, /--html <file> +where to write the HTML report/);
});

test('bench --only with an unknown entry: exit 2 naming the option, the value and the known ones', () => {
  const r = sockbuf('bench', '--only', 'drain,nope');
  assert.equal(r.status, 2);
  assert.match(
    r.stderr,
    /invalid value for --only: 'nope' \(expected one of tcp, tcp-lab, sysctl-sweep, ping, ping-lab, drain, streamer, udp, udp-netcat, udp-max, gso\)/,
  );
});

test('bench --repeat 0 (the quick suite): runSuite refuses it, the CLI says --repeat (exit 2)', () => {
  const r = sockbuf('bench', '--repeat', '0');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /invalid value for --repeat: '0' \(expected/);
});
