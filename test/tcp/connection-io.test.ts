// TcpConnection's own write/end/close and TcpServer's address(), against real loopback sockets: a
// write's promise is the back-pressure (it stays pending while the peer reads nothing and resolves
// once it does), end() waits for the peer's FIN, close() destroys at once, and a write on a closed
// connection rejects with an EnvironmentError.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import { connect, listen, type TcpConnection } from '../../src/tcp/connection.js';

/** A listener whose accepted connections are handed out in order. */
async function server(host = '127.0.0.1') {
  const accepted: TcpConnection[] = [];
  const srv = await listen({ host, port: 0 }, (c) => accepted.push(c));
  const next = async () => {
    while (accepted.length === 0) await sleep(5);
    return accepted.shift() as TcpConnection;
  };
  return { srv, next };
}

test('write() resolves while under the high-water mark, stays pending while the peer reads nothing, resolves once it reads', {
  timeout: 30_000,
}, async () => {
  const { srv, next } = await server();
  const client = await connect({ host: '127.0.0.1', port: srv.port, writableHighWaterMark: 16 * 1024 });
  const peer = await next();
  try {
    await client.write(Buffer.alloc(1024)); // far below the mark: resolves at once
    await client.write('text too');
    // the peer reads nothing: the kernel's buffers fill, then the process's, and a write waits
    const chunk = Buffer.alloc(256 * 1024);
    let pending: Promise<void> | undefined;
    for (let i = 0; i < 4096 && !pending; i++) {
      const w = client.write(chunk);
      const state = await Promise.race([w.then(() => 'done'), sleep(100).then(() => 'pending')]);
      if (state === 'pending') pending = w;
    }
    assert.ok(pending, 'a write stayed pending while the peer read nothing');
    let got = 0;
    peer.onData = (c) => {
      got += c.length;
    };
    await pending; // the peer reads: the socket drains and the write resolves
    assert.ok(got > 0);
  } finally {
    client.close();
    peer.close();
    await srv.close();
  }
});

test('end() flushes, sends FIN and resolves after the peer ends too; the peer got every byte', {
  timeout: 30_000,
}, async () => {
  const { srv, next } = await server('::1');
  const client = await connect({ host: '::1', port: srv.port, onData: () => {} });
  const peer = await next();
  let got = 0;
  let peerEnded = false;
  peer.onData = (c) => {
    got += c.length;
  };
  peer.socket.on('end', () => {
    peerEnded = true;
  });
  for (let i = 0; i < 64; i++) await client.write(Buffer.alloc(64 * 1024, i));
  await client.end();
  assert.ok(peerEnded, 'the peer saw our FIN before end() resolved');
  assert.equal(got, 64 * 64 * 1024);
  assert.equal(await client.closed, undefined);
  await srv.close();
});

test('close() destroys at once; a write after it rejects with an EnvironmentError; a bad write is a UsageError', {
  timeout: 30_000,
}, async () => {
  const { srv, next } = await server();
  const client = await connect({ host: '127.0.0.1', port: srv.port });
  const peer = await next();
  client.close();
  client.close(); // idempotent
  assert.equal(await client.closed, undefined);
  await assert.rejects(client.write('late'), EnvironmentError);
  // biome-ignore lint/suspicious/noExplicitAny: a plain-JS caller
  await assert.rejects(peer.write(42 as any), (e: unknown) => e instanceof UsageError && e.option === 'data');
  await client.end(); // on a closed connection: resolves
  peer.close(); // it reads nothing, so it would never see our FIN
  await peer.closed;
  await srv.close();
});

test('server.address() says the address bound, as net.Server#address does, also after close', async () => {
  for (const [host, family] of [
    ['127.0.0.1', 'IPv4'],
    ['::1', 'IPv6'],
  ] as const) {
    const srv = await listen({ host, port: 0 }, () => {});
    const live = srv.server.address();
    assert.deepEqual(srv.address(), live);
    assert.deepEqual(srv.address(), { address: host, family, port: srv.port });
    await srv.close();
    assert.deepEqual(srv.address(), { address: host, family, port: srv.port });
  }
});
