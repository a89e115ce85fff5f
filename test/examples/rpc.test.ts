// The RPC example over loopback (it imports 'sockbuf' itself, i.e. the built package: npm test builds):
// many calls in flight on one connection, a large request and reply through the adaptive reader, an
// error reply, and an oversize length prefix that the server refuses by closing the connection.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { RpcClient, RpcError } from '../../examples/rpc/client.js';
import { startRpcServer } from '../../examples/rpc/server.js';

test('rpc example: 2000 calls in flight, a 4 MiB echo, an unknown method, an oversize frame refused', {
  timeout: 60_000,
}, async () => {
  const server = await startRpcServer(
    { port: 0, maxRequestBytes: 8 * 1024 * 1024 },
    {
      add: ({ a, b }: { a: number; b: number }) => a + b,
      echo: async (text: string) => text,
    },
  );
  const rpc = await RpcClient.connect('127.0.0.1', server.port);
  try {
    const sums = await Promise.all(
      Array.from({ length: 2000 }, (_, i) => rpc.call<number>('add', { a: i, b: 1 })),
    );
    assert.deepEqual(
      sums,
      Array.from({ length: 2000 }, (_, i) => i + 1),
    );

    const big = 'x'.repeat(4 * 1024 * 1024);
    assert.equal(await rpc.call<string>('echo', big), big);
    // the reply came in reads that grew the client's read buffer from its 512 B start
    const reader = rpc.conn.stats().reader;
    assert.ok(reader.grows > 0, `reader grew ${reader.grows} times`);

    await assert.rejects(
      rpc.call('nope'),
      (e: unknown) => e instanceof RpcError && /no such method: nope/.test(e.message),
    );

    // a length prefix past maxRequestBytes: the server closes the connection without buffering it
    const raw = net.connect({ host: '127.0.0.1', port: server.port });
    raw.on('error', () => {});
    await new Promise((r) => raw.once('connect', r));
    raw.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    await new Promise((r) => raw.once('close', r));
  } finally {
    rpc.close();
    await server.close(true);
  }
});
