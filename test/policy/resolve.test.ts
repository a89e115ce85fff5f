// Host names resolved when the socket is made: real lookups (/etc/hosts) and real loopback sockets.
import assert from 'node:assert/strict';
import net from 'node:net';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { EnvironmentError, ResolveError, UsageError } from '../../src/errors.js';
import { connectPinned } from '../../src/policy/apply.js';
import { resolveHost, tryEach } from '../../src/policy/resolve.js';

test('an address is its own; a name gives every address; an unknown name is a ResolveError (exit 3)', async () => {
  assert.deepEqual(await resolveHost('127.0.0.1'), ['127.0.0.1']);
  assert.deepEqual(await resolveHost('::1'), ['::1']);
  const local = await resolveHost('localhost');
  assert.ok(local.length >= 1 && local.every((a) => net.isIP(a)), local.join());
  assert.ok((await resolveHost(hostname())).length >= 1);
  await assert.rejects(resolveHost('no-such-host.invalid'), (e: unknown) => {
    assert.ok(e instanceof ResolveError && e instanceof EnvironmentError);
    assert.equal(e.option, undefined, 'no option given');
    assert.equal(e.host, 'no-such-host.invalid');
    assert.match(e.message, /no-such-host\.invalid/);
    return true;
  });
});

test('tryEach: a refused first address falls through to the next (IPv6 refused, IPv4 listening)', async () => {
  const srv = net.createServer((s) => s.end());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  const tried: string[] = [];
  try {
    const { socket } = await tryEach(['::1', '127.0.0.1'], (host, timeoutSeconds) => {
      tried.push(host);
      return connectPinned({ host, port }, { timeoutSeconds });
    });
    assert.equal(socket.remoteAddress, '127.0.0.1');
    socket.destroy();
    assert.deepEqual(tried, ['::1', '127.0.0.1']);
    // all refused: the first address's error
    await assert.rejects(
      tryEach(['::1', '::1'], (host) => connectPinned({ host, port })),
      (e: unknown) => (e as { code?: string }).code === 'ECONNREFUSED',
    );
    // a usage error is the same for every address: not retried
    let calls = 0;
    await assert.rejects(
      tryEach(['::1', '127.0.0.1'], async () => {
        calls++;
        throw new UsageError('bad');
      }),
      UsageError,
    );
    assert.equal(calls, 1);
  } finally {
    srv.close();
  }
});
