import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { Registry as Registry14 } from 'prom-client-14';
import { registerMetrics } from '../../src/observe/metrics.js';
import { trackSource } from '../../src/observe/tracked.js';
import { fdOf } from '../../src/sys/socket.js';

async function values(
  r: Registry,
  name: string,
): Promise<{ labels: Record<string, string | number>; value: number }[]> {
  const m = await r.getSingleMetric(name)?.get();
  assert.ok(m, `${name} registered`);
  return m.values.map((v) => ({ labels: v.labels as Record<string, string | number>, value: v.value }));
}

test('registerMetrics: UDP receivers summed by name; packets per batch since the previous scrape', async () => {
  const registry = new Registry();
  registerMetrics(registry);
  const stats = {
    received: 1000,
    batches: 10,
    kernelDrops: 3,
    userspaceDrops: 2,
    truncated: 1,
    rcvbuf: 8 << 20,
  };
  const untrackA = trackSource({ kind: 'udp', name: '127.0.0.1:9000', stats: () => ({ ...stats }) });
  const untrackB = trackSource({
    kind: 'udp',
    name: '127.0.0.1:9000',
    stats: () => ({ ...stats, kernelDrops: 4 }),
  });
  const untrackC = trackSource({
    kind: 'udp',
    name: '127.0.0.1:9000',
    stats: () => {
      throw new Error('closed'); // a source that closed under the scrape is skipped, not fatal
    },
  });
  try {
    assert.deepEqual(await values(registry, 'sockbuf_udp_kernel_drops_total'), [
      { labels: { receiver: '127.0.0.1:9000' }, value: 7 },
    ]);
    assert.equal((await values(registry, 'sockbuf_udp_truncated_total'))[0].value, 2);
    assert.equal((await values(registry, 'sockbuf_udp_packets_per_batch'))[0].value, 100);
    stats.received += 640;
    stats.batches += 10; // both sources move: 1280 datagrams in 20 batches
    assert.equal((await values(registry, 'sockbuf_udp_packets_per_batch'))[0].value, 64);
    const text = await registry.metrics();
    assert.match(text, /# TYPE sockbuf_udp_kernel_drops_total counter/);
    assert.match(text, /sockbuf_udp_received_total\{receiver="127.0.0.1:9000"\} 3280/);
  } finally {
    untrackA();
    untrackB();
    untrackC();
  }
  assert.deepEqual(
    await values(registry, 'sockbuf_udp_kernel_drops_total'),
    [],
    'untracked sources disappear',
  );
});

test('registerMetrics: TCP connections with an fd get their limited ratios from TCP_INFO', async () => {
  const registry = new Registry();
  registerMetrics(registry);
  const server = net.createServer((c) => c.resume());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise((r) => client.on('connect', r));
  await new Promise((r) => client.write(Buffer.alloc(1 << 20), r));
  const untrack = trackSource({
    kind: 'tcp',
    name: 'client',
    stats: () => ({ readBufferBytes: 65536, fd: fdOf(client) }),
  });
  const untrack2 = trackSource({
    kind: 'tcp',
    name: 'client',
    stats: () => ({
      readBufferBytes: 4096,
      tcpInfo: { busyTime: 1000, rwndLimited: 1000, sndbufLimited: 0 },
    }),
  });
  try {
    assert.deepEqual(await values(registry, 'sockbuf_tcp_connections'), [
      { labels: { name: 'client' }, value: 2 },
    ]);
    assert.equal((await values(registry, 'sockbuf_read_buffer_bytes'))[0].value, 65536 + 4096);
    const [rwnd] = await values(registry, 'sockbuf_tcp_rwnd_limited_ratio');
    assert.ok(rwnd.value > 0 && rwnd.value <= 1, `ratio ${rwnd.value}`);
    const [snd] = await values(registry, 'sockbuf_tcp_sndbuf_limited_ratio');
    assert.ok(snd.value >= 0 && snd.value < 1);
  } finally {
    untrack();
    untrack2();
    client.destroy();
    server.close();
  }
});

test('registerMetrics sees the sockets sockbuf itself opens, and forgets them when they close', async () => {
  const { createUdpReceiver } = await import('../../src/udp/receiver.js');
  const { connect, listen } = await import('../../src/tcp/connection.js');
  const registry = new Registry();
  registerMetrics(registry);
  const receiver = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  const server = await listen({ port: 0 }, () => {});
  const client = await connect({ host: '127.0.0.1', port: server.port });
  await new Promise((r) => setTimeout(r, 50)); // the server's accept
  const udpName = `127.0.0.1:${receiver.port}`;
  const rcvbuf = (await values(registry, 'sockbuf_udp_receive_buffer_bytes')).find(
    (v) => v.labels.receiver === udpName,
  );
  assert.ok(rcvbuf && rcvbuf.value >= 8 << 20, 'the receiver is there with its SO_RCVBUF');
  const conns = await values(registry, 'sockbuf_tcp_connections');
  // a client by where it connects, never by its ephemeral port
  assert.equal(conns.find((v) => v.labels.name === `client 127.0.0.1:${server.port}`)?.value, 1);
  assert.equal(conns.find((v) => v.labels.name === `127.0.0.1:${server.port}`)?.value, 1);
  await receiver.close();
  client.socket.destroy();
  await client.closed;
  await server.close(true);
  const after = await values(registry, 'sockbuf_udp_receive_buffer_bytes');
  assert.equal(
    after.find((v) => v.labels.receiver === udpName),
    undefined,
  );
  const connsAfter = await values(registry, 'sockbuf_tcp_connections');
  assert.equal(connsAfter.find((v) => v.labels.name === `client 127.0.0.1:${server.port}`)?.value ?? 0, 0);
});

test("registerMetrics takes an application's prom-client 14 Registry (structural type); the metrics appear in its output", async () => {
  const registry = new Registry14(); // prom-client@14, installed under the alias prom-client-14
  registerMetrics(registry); // type-checks: npm run typecheck compiles this file
  // @ts-expect-error a registry must have registerMetric (the type can refuse)
  assert.throws(() => registerMetrics({}));
  const untrack = trackSource({
    kind: 'udp',
    name: '127.0.0.1:9001',
    stats: () => ({
      received: 42,
      batches: 2,
      kernelDrops: 0,
      userspaceDrops: 0,
      truncated: 0,
      rcvbuf: 4096,
    }),
  });
  try {
    const text = await registry.metrics();
    assert.match(text, /# TYPE sockbuf_udp_received_total counter/);
    assert.match(text, /sockbuf_udp_received_total\{receiver="127.0.0.1:9001"\} 42/);
    assert.match(text, /sockbuf_udp_packets_per_batch\{receiver="127.0.0.1:9001"\} 21/);
  } finally {
    untrack();
  }
});
