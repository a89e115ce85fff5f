import assert from 'node:assert/strict';
import { test } from 'node:test';
import { remotePlacement } from '../../src/serve/placement.js';

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
