// `sockbuf inspect` as a command: JSON and table output, --watch bounded by --count, bad options exit 2.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from './argv.js';

/** Runs the CLI without blocking this process's event loop (it holds the sockets being inspected). */
function sockbuf(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...SOCKBUF_ARGV, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill(), 20_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

test('inspect --json --port: the listener, with its owner', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as net.AddressInfo).port;
    // --state listen: --port matches either end, and another test's connection may use this number too
    const r = await sockbuf('inspect', '--json', '--tcp', '--state', 'listen', '--port', String(port));
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.schema, 'sockbuf.v1');
    assert.equal(doc.command, 'inspect');
    assert.equal(doc.sockets.length, 1);
    assert.equal(doc.sockets[0].state, 'listen');
    assert.equal(doc.sockets[0].localPort, port);
    assert.equal(doc.sockets[0].pid, process.pid);
    const t = await sockbuf('inspect', '--port', String(port));
    assert.equal(t.status, 0);
    assert.match(
      t.stdout,
      new RegExp(`tcp\\s+listen\\s+127\\.0\\.0\\.1:${port}\\s+\\*\\s+${process.pid}/node`),
    );
  } finally {
    server.close();
  }
});

test('inspect --watch --count --json prints one JSON line per interval, then exits', async () => {
  const r = await sockbuf('inspect', '--watch', '100ms', '--count', '2', '--json', '--state', 'listen');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 2);
  for (const l of lines) {
    const s = JSON.parse(l);
    assert.ok(s.intervalSeconds > 0);
    assert.ok(s.sockets.every((x: { state: string }) => x.state === 'listen'));
  }
});

test('inspect: bad options are usage errors naming the option (exit 2)', async () => {
  for (const [args, what] of [
    [['--port', '70000'], /--port: '70000'/],
    [['--state', 'open'], /--state: 'open'/],
    [['--watch', '1'], /--watch: '1'/],
    // the CLI checks --watch as it parses, by the declaration watchSockets checks intervalSeconds with
    [['--watch', '10ms'], /invalid value for --watch: '10ms' \(expected a duration from 50 ms to 1 h\)/],
    [['--count', '3'], /--count '3' needs --watch/],
  ] as const) {
    const r = await sockbuf('inspect', ...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
  }
});
