// The first signal keeps the results (issue 44, item 3): `blast tcp --iperf3` and `sink tcp --iperf3`
// stopped by SIGINT during a test against the real iperf3 print what they measured, said as
// interrupted, not as an error (before: blast printed no summary; the sink said "0 B received,
// 1 error(s)" after a GiB). Loopback, about 3 s each; skips when iperf3 is not installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/ports.js';
import { SOCKBUF_ARGV } from './argv.js';

const probe = spawnSync('iperf3', ['--version'], { encoding: 'utf8' });
const NO_IPERF3 =
  probe.error || probe.status !== 0 ? 'iperf3 is not installed (apt-get install iperf3)' : false;

function run(file: string, args: string[]) {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exit, out: () => out };
}

/** Whether 127.0.0.1:port listens (from /proc: iperf3 -1 must see no probe, and buffers its stdout). */
function listening(port: number): boolean {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .some((l) => {
      const f = l.trim().split(/\s+/);
      return f[1] === hex && f[3] === '0A';
    });
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await sleep(20))
    if (Date.now() > end) throw new Error(`${what} within ${ms} ms`);
}

test('SIGINT on blast tcp --iperf3 mid-test: its figures printed, interrupted, exit 130', {
  skip: NO_IPERF3,
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  const server = run('iperf3', ['-s', '-1', '-B', '127.0.0.1', '-p', String(port)]);
  try {
    await until('iperf3 -s listening', () => listening(port));
    const blast = run(process.execPath, [
      ...SOCKBUF_ARGV,
      'blast',
      'tcp',
      '--iperf3',
      '--to',
      `127.0.0.1:${port}`,
      '--duration',
      '30s',
    ]);
    try {
      // two interval lines: it is sending
      await until('two intervals', () => (blast.out().match(/Gbit\/s|Mbit\/s/g) ?? []).length >= 2);
      blast.child.kill('SIGINT');
      assert.equal(await blast.exit, 130, blast.out());
      const line = blast.out().match(/sent ([\d.]+ \S+) in .* over 1 stream\(s\); interrupted by SIGINT/);
      assert.ok(line, blast.out());
      assert.doesNotMatch(line[1], /^0 B/);
    } finally {
      blast.child.kill('SIGKILL');
    }
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('SIGINT on sink tcp --iperf3 mid-test: the bytes it received printed as interrupted, 0 errors', {
  skip: NO_IPERF3,
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  const sink = run(process.execPath, [...SOCKBUF_ARGV, 'sink', 'tcp', '--iperf3', '--listen', String(port)]);
  try {
    await until('the sink listening', () => sink.out().includes('listening'));
    const client = run('iperf3', ['-c', '127.0.0.1', '-p', String(port), '-t', '30']);
    try {
      await until('two intervals at the sink', () => (sink.out().match(/reads, buffer/g) ?? []).length >= 2);
      sink.child.kill('SIGINT');
      assert.equal(await sink.exit, 130, sink.out());
      const out = sink.out();
      assert.match(out, /iperf3 test interrupted: received [1-9][\d.]* \S+ in/, out);
      assert.match(
        out,
        /result: 1 test\(s\) \(1 interrupted\), [1-9][\d.]* \S+ received, .* 0 error\(s\)/,
        out,
      );
    } finally {
      client.child.kill('SIGKILL');
    }
  } finally {
    sink.child.kill('SIGKILL');
  }
});
