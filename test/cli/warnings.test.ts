// issue 23 item 4: the CLI prints its own one-line warnings (`sockbuf: warning: …` on stderr), not
// Node's `(node:PID) [CODE] Warning: …` with its "(Use `node --trace-warnings ...`)" hint; the library
// still emits them through process.emitWarning (an application's handler decides).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { installWarnings } from '../../src/cli/warnings.js';
import { SOCKBUF_ARGV } from './argv.js';

test('installWarnings: one line per warning, the message as emitted, control characters escaped', async () => {
  const before = process.listeners('warning');
  const lines: string[] = [];
  try {
    installWarnings((l) => lines.push(l));
    process.emitWarning('gro off', { code: 'SOCKBUF_GRO_OFF' });
    process.emitWarning('host \u001b]0;owned\u0007 said so');
    process.emitWarning('old API', 'DeprecationWarning');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lines, [
      'sockbuf: warning: gro off\n',
      'sockbuf: warning: host \\x1b]0;owned\\x07 said so\n',
      'sockbuf: warning: DeprecationWarning: old API\n',
    ]);
  } finally {
    process.removeAllListeners('warning');
    for (const l of before) process.on('warning', l);
  }
});

test('sink tcp --rcvbuf past rmem_max: the clamp warning is one sockbuf line, no Node hint', async () => {
  const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
  const ask = String(Math.min(rmemMax * 4, 2 ** 31 - 1));
  const sink = spawn(
    process.execPath,
    [...SOCKBUF_ARGV, 'sink', 'tcp', '--listen', '127.0.0.1:0', '--rcvbuf', ask, '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const killer = setTimeout(() => sink.kill('SIGKILL'), 20_000);
  let out = '';
  let err = '';
  sink.stdout.on('data', (d) => {
    out += d;
    if (out.includes('"ready"')) sink.kill('SIGTERM');
  });
  sink.stderr.on('data', (d) => {
    err += d;
  });
  await new Promise((r) => sink.once('close', r));
  clearTimeout(killer);
  assert.match(out, /"event":"result"/, 'ended by SIGTERM with its result');
  assert.match(
    err,
    new RegExp(`^sockbuf: warning: SO_RCVBUF ${ask} .* was clamped by net\\.core\\.rmem_max`, 'm'),
  );
  assert.doesNotMatch(err, /trace-warnings|\(node:\d+\)/);
  assert.equal(err.trim().split('\n').length, 1, err);
});
