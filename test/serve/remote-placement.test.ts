import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runEnds } from '../../src/bench/runner.js';
import { remotePlacement } from '../../src/serve/remote-placement.js';
import { startServer } from '../../src/serve/server.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-sink.mjs', import.meta.url));
const SENDER = fileURLToPath(new URL('../fixtures/bench/end.mjs', import.meta.url));

test('remote placement: the receiver goes through sockbuf remote, the sender runs here unchanged', () => {
  const p = remotePlacement({ host: '10.0.0.2', port: 5209 }, 'tok');
  assert.equal(p.host, '10.0.0.2');
  const rx = p.command('receiver', {
    file: '/usr/bin/node',
    args: ['--import', 'tsx', '/w/src/cli/main.ts', 'sink', 'tcp', '--listen', '10.0.0.2:0', '--json'],
  });
  assert.deepEqual(rx.args, [
    '--import',
    'tsx',
    '/w/src/cli/main.ts',
    'remote',
    '10.0.0.2:5209',
    '--',
    'sink',
    'tcp',
    '--listen',
    '10.0.0.2:0',
    '--json',
  ]);
  assert.equal(rx.env?.SOCKBUF_TOKEN, 'tok', 'the token goes by environment, not argv');
  const tx = {
    file: '/usr/bin/node',
    args: ['/w/dist/cli/main.js', 'blast', 'tcp', '--to', '10.0.0.2:4000'],
  };
  assert.deepEqual(p.command('sender', tx), tx);
  assert.throws(
    () => p.command('receiver', { file: '/usr/bin/node', args: ['/w/fixture.mjs'] }),
    /only sockbuf ends/,
  );
  assert.deepEqual(p.describe(), { name: 'remote', server: '10.0.0.2:5209' });
});

test('the runner with the remote placement: receiver through serve, sender here, results from both', async () => {
  const srv = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    maxDurationSeconds: 10,
    maxBytes: 1 << 30,
    idleSeconds: 5,
    graceSeconds: 0.2,
    farEnd: (args) => ({ file: process.execPath, args: [FAKE, ...args] }),
  });
  try {
    const placement = remotePlacement(srv.address);
    const out = await runEnds(
      {
        receiver: { sockbuf: ['sink', 'tcp', '--listen', '{host}:0', '--reader', 'adaptive', '--json'] },
        sender: {
          module: SENDER,
          args: ['sender', '--host', '{host}', '--port', '{port}', '--bytes', '70000'],
        },
      },
      { placement, timeoutSeconds: 30 },
    );
    assert.equal(out.receiver.ready?.host, '127.0.0.1');
    const result = out.receiver.lines.find((l) => l.event === 'result');
    assert.equal(result?.bytes, 70000, 'the far end counted what the sender here sent');
    assert.equal(out.receiver.code, 0);
    assert.equal(out.sender.code, 0);
    // receivers stopped by SIGTERM (receiverStop: 'term') stop the far end through the server
    const term = await runEnds(
      {
        receiver: { sockbuf: ['sink', 'tcp', '--listen', '{host}:0', '--reader', 'hang'] },
        sender: { module: SENDER, args: ['sender', '--host', '{host}', '--port', '{port}', '--bytes', '10'] },
        receiverStop: 'term',
      },
      { placement, timeoutSeconds: 30 },
    );
    assert.equal(term.receiver.lines.find((l) => l.event === 'result')?.bytes, 10);
    assert.equal(srv.busy, false);
  } finally {
    await srv.close();
  }
});
