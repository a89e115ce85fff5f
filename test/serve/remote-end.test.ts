// The remote end as a process (`sockbuf remote SERVER -- sink …`), against a serve with a stand-in far end.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseServer, runRemoteEnd } from '../../src/serve/remote-end.js';
import { startServer } from '../../src/serve/server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const FAKE = fileURLToPath(new URL('./fixtures/fake-sink.mjs', import.meta.url));

const serve = () =>
  startServer({
    listen: { host: '127.0.0.1', port: 0 },
    maxDurationSeconds: 10,
    maxBytes: 1 << 30,
    idleSeconds: 5,
    graceSeconds: 0.2,
    farEnd: (args) => ({ file: process.execPath, args: [FAKE, ...args] }),
  });

function remote(port: number, ...far: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'remote', `127.0.0.1:${port}`, '--', ...far],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(JSON.parse(l));
    for (const w of waiters.splice(0)) w();
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const line = async (n: number) => {
    while (lines.length <= n) await new Promise<void>((r) => waiters.push(r));
    return lines[n];
  };
  return { child, lines, line, exit, stderr: () => stderr };
}

test('parseServer: the port defaults to 5209; IPv6 and host:port work', () => {
  assert.deepEqual(parseServer('10.0.0.2'), { host: '10.0.0.2', port: 5209 });
  assert.deepEqual(parseServer('10.0.0.2:7000'), { host: '10.0.0.2', port: 7000 });
  assert.deepEqual(parseServer('::1'), { host: '::1', port: 5209 });
  assert.deepEqual(parseServer('[::1]:7000'), { host: '::1', port: 7000 });
  assert.deepEqual(parseServer('localhost'), { host: 'localhost', port: 5209 });
  assert.deepEqual(parseServer('vm.example:7000'), { host: 'vm.example', port: 7000 });
  assert.throws(() => parseServer('nowhere:x'), /--remote/);
});

test('remote: ready line with the server host, the far end drains, its result printed here, exit 0', async () => {
  const srv = await serve();
  try {
    const r = remote(
      srv.address.port,
      'sink',
      'tcp',
      '--listen',
      '{host}:0',
      '--reader',
      'adaptive',
      '--json',
    );
    const ready = await r.line(0);
    assert.equal(ready.event, 'ready');
    assert.equal(ready.host, '127.0.0.1');
    await new Promise<void>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: Number(ready.port) }, () => s.end(Buffer.alloc(4321)));
      s.on('close', () => resolve());
    });
    assert.equal(await r.exit, 0);
    assert.deepEqual([r.lines[1].event, r.lines[1].bytes], ['result', 4321]);
  } finally {
    await srv.close();
  }
});

test('remote: SIGTERM ends the far end through the server, its result printed, exit 143', async () => {
  const srv = await serve();
  try {
    const r = remote(srv.address.port, 'sink', 'tcp', '--reader', 'hang');
    await r.line(0);
    r.child.kill('SIGTERM');
    // every command exits 128 + the signal's number when a signal ended it (issue 37)
    assert.equal(await r.exit, 143);
    assert.equal(r.lines.at(-1)?.event, 'result');
  } finally {
    await srv.close();
  }
});

test('remote: a far end serve cannot run is a usage error (exit 2); no server is exit 3', () => {
  const bad = spawnSync(
    process.execPath,
    ['--import', 'tsx', MAIN, 'remote', '127.0.0.1:1', '--', 'blast', 'tcp'],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /runs sink tcp \[--echo\] and sink udp far ends, not 'blast tcp'/);
  const none = spawnSync(
    process.execPath,
    ['--import', 'tsx', MAIN, 'remote', '127.0.0.1:1', '--', 'sink', 'tcp'],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  assert.equal(none.status, 3);
  assert.match(
    none.stderr,
    /connecting to the sockbuf serve at 127\.0\.0\.1:1: ECONNREFUSED; nothing listens there \(is the sockbuf serve running, on that port\?\)/,
  );
});

// found by the hostile sweep (issue 23): `remote --token ''` went on as if no token was given
test('runRemoteEnd: an empty token is a UsageError naming token, before anything connects', async () => {
  await assert.rejects(
    runRemoteEnd({
      server: { host: '127.0.0.1', port: 9 },
      token: '',
      args: ['sink', 'tcp'],
      print: () => {},
      warn: () => {},
    }),
    (e: Error & { option?: string }) => e.name === 'UsageError' && e.option === 'token',
  );
});
