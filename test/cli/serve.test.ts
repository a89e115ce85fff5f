// `sockbuf serve` as a command: bad options exit 2, a port in use exits 3, --json prints a ready line.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { ServeClient } from '../../src/serve/client.js';
import { SOCKBUF_ARGV } from './argv.js';

const sockbuf = (...args: string[]) =>
  spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8', timeout: 20_000 });

test('serve: absurd limits are usage errors naming the option (exit 2)', () => {
  const r = sockbuf('serve', '--max-duration', 'forever');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--max-duration: 'forever'/);
  // out of range: the CLI checks as it parses, by the declaration startServer checks with
  const long = sockbuf('serve', '--max-duration', '48h', '--listen', '127.0.0.1:0');
  assert.equal(long.status, 2);
  assert.match(
    long.stderr,
    /invalid value for --max-duration: '48h' \(expected a duration more than 0 and at most 24 h\)/,
  );
  const idle = sockbuf('serve', '--idle-timeout', '0s', '--listen', '127.0.0.1:0');
  assert.equal(idle.status, 2);
  assert.match(idle.stderr, /invalid value for --idle-timeout: '0s'/);
  const t = sockbuf('serve', '--listen', '1.2.3.4.5:1');
  assert.equal(t.status, 2);
  assert.match(t.stderr, /--listen/);
  // zero bytes makes no sense as a cap; --max-per-client is a count from 1
  for (const [opt, value] of [
    ['--max-bytes', '0'],
    ['--max-per-client', '0'],
    ['--max-per-client', 'x'],
    ['--max-per-client', '4097'],
  ]) {
    const z = sockbuf('serve', opt, value, '--listen', '127.0.0.1:0');
    assert.equal(z.status, 2, `${opt} ${value}: ${z.stderr}`);
    assert.match(z.stderr, new RegExp(`${opt}: '${value}'`));
  }
});

test('serve: a port in use is exit 3 with the reason', async () => {
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen({ host: '127.0.0.1', port: 0 }, () => r()));
  const port = (holder.address() as net.AddressInfo).port;
  const r = sockbuf('serve', '--listen', `127.0.0.1:${port}`);
  holder.close();
  assert.equal(r.status, 3);
  assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+ \(--listen\): EADDRINUSE/);
});

test('serve --json: a ready line with the port; answers hello; stops on SIGTERM', async () => {
  const child = spawn(process.execPath, [...SOCKBUF_ARGV, 'serve', '--listen', '0', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
    const ready = JSON.parse(line.split('\n')[0]);
    assert.equal(ready.event, 'ready');
    assert.equal(ready.host, '127.0.0.1', 'loopback by default');
    const c = await ServeClient.connect({ host: '127.0.0.1', port: ready.port });
    assert.equal((await c.hello()).maxDurationSeconds, 60);
    c.close();
    const exited = new Promise((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 143);
  } finally {
    child.kill('SIGKILL');
  }
});

test('serve --json: a SIGTERM sent the moment the ready line arrives ends it cleanly (exit 143)', async () => {
  for (let i = 0; i < 3; i++) {
    const child = spawn(process.execPath, [...SOCKBUF_ARGV, 'serve', '--listen', '0', '--json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const exited = new Promise<[number | null, string | null]>((r) =>
        child.once('exit', (code, signal) => r([code, signal])),
      );
      child.stdout.once('data', () => child.kill('SIGTERM'));
      assert.deepEqual(await exited, [143, null], 'its own handler ended it, not the signal');
    } finally {
      child.kill('SIGKILL');
    }
  }
});
