// Host names on the command line: `--to $(hostname):PORT` reaches a sink, an unknown name exits 3
// naming the option, IPv6 is printed in brackets.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from './argv.js';

function sockbuf(args: string[]) {
  const child = spawn(process.execPath, [...SOCKBUF_ARGV, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const line = async (n: number) => {
    while (lines.length <= n) await new Promise<void>((r) => waiters.push(r));
    return lines[n];
  };
  return { child, lines, line, exited, stderr: () => stderr };
}

test('blast tcp --to $(hostname):PORT reaches a sink (the name resolved when the socket is made)', {
  timeout: 60_000,
}, async () => {
  const sink = sockbuf(['sink', 'tcp', '--listen', `${hostname()}:0`, '--once', '--json']);
  const ready = JSON.parse(await sink.line(0));
  assert.equal(ready.event, 'ready');
  const blast = sockbuf([
    'blast',
    'tcp',
    '--to',
    `${hostname()}:${ready.port}`,
    '--bytes',
    '4M',
    '--raw',
    '--json',
  ]);
  assert.equal(await blast.exited, 0, blast.stderr());
  assert.equal(await sink.exited, 0, sink.stderr());
  const result = sink.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'result');
  assert.equal(result.bytes, 4 * 1024 * 1024);
});

test('an unknown host name exits 3 naming the option and the name', { timeout: 60_000 }, async () => {
  const blast = sockbuf(['blast', 'tcp', '--to', 'no-such-host.invalid:1', '--bytes', '1K']);
  assert.equal(await blast.exited, 3);
  assert.match(blast.stderr(), /--to 'no-such-host\.invalid:1'/);
  const sink = sockbuf(['sink', 'udp', '--listen', 'no-such-host.invalid:0']);
  assert.equal(await sink.exited, 3);
  assert.match(sink.stderr(), /--listen 'no-such-host\.invalid:0'/);
  const remote = sockbuf(['remote', 'no-such-host.invalid', '--', 'sink', 'tcp']);
  assert.equal(await remote.exited, 3);
  assert.match(remote.stderr(), /<server> 'no-such-host\.invalid'/);
  // a scenario's own option, before any end starts
  const bench = sockbuf(['bench', 'drain', '--remote', 'no-such-host.invalid:5209']);
  assert.equal(await bench.exited, 3);
  assert.match(bench.stderr(), /^sockbuf: cannot resolve --remote 'no-such-host\.invalid:5209'/m);
  assert.doesNotMatch(bench.stderr(), /receiver|run 1/);
  const bad = sockbuf(['blast', 'tcp', '--to', 'no such host:1']);
  assert.equal(await bad.exited, 2, 'not a name at all: bad usage');
  assert.match(bad.stderr(), /--to/);
});

test('IPv6 is printed in brackets: listening on [::1]:PORT', { timeout: 60_000 }, async () => {
  const sink = sockbuf(['sink', 'tcp', '--listen', '[::1]:0', '--once']);
  assert.match(await sink.line(0), /^listening on \[::1\]:\d+$/);
  sink.child.kill('SIGTERM');
  await sink.exited;
});
