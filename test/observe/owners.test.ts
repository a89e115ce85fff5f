import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { dumpSockets } from '../../src/observe/inspect.js';
import { socketInode, socketOwners } from '../../src/observe/owners.js';

test('socketInode reads socket:[N] links only', () => {
  assert.equal(socketInode('socket:[12345]'), 12345);
  assert.equal(socketInode('pipe:[12345]'), undefined);
  assert.equal(socketInode('/dev/null'), undefined);
  assert.equal(socketInode('socket:[]'), undefined);
});

test('socketOwners finds this process behind its own listening socket', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const [s] = dumpSockets({ protocols: ['tcp'], families: [4] }).filter((x) => x.localPort === port);
    assert.ok(s);
    assert.deepEqual(socketOwners().get(s.inode), { pid: process.pid, command: 'node' });
    assert.equal(socketOwners('/nonexistent').size, 0);
  } finally {
    server.close();
  }
});
