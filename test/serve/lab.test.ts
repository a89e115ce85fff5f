// Two hosts with their own addresses: sockbuf serve in a lab's server namespace, the client side in
// its client namespace. A UDP bench with --remote, and a TCP far end through `sockbuf remote`.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withLab } from '../../src/lab/lab.js';

const skip = process.getuid?.() !== 0 && 'needs root (the lab: network namespaces, tun devices)';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const sockbuf = (...args: string[]) => [process.execPath, '--import', 'tsx', MAIN, ...args];

test('serve across two lab hosts: bench udp --remote, and a TCP far end through sockbuf remote', {
  skip,
  timeout: 240_000,
}, async () => {
  await withLab({ rttMs: 1 }, async (lab) => {
    const server = lab.info.hosts.server.ipv4;
    const client = lab.info.hosts.client.ipv4;
    const serve = lab.spawn('server', sockbuf('serve', '--listen', `${server}:5209`, '--json'), {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const log: Record<string, unknown>[] = [];
    const rl = createInterface({ input: serve.stdout as NodeJS.ReadableStream });
    const ready = new Promise<Record<string, unknown>>((resolve) =>
      rl.on('line', (l) => {
        const o = JSON.parse(l);
        log.push(o);
        if (o.event === 'ready') resolve(o);
      }),
    );
    try {
      assert.equal((await ready).host, server);
      // a whole bench from the client host, its receiver on the server host
      const b = await lab.exec(
        'client',
        sockbuf(
          'bench',
          'udp',
          '--remote',
          server,
          '--receivers',
          'batch',
          '--rates',
          '2000',
          '--duration',
          '1s',
          '--repeat',
          '1',
          '--json',
        ),
        { timeoutMs: 120_000 },
      );
      assert.equal(b.code, 0, b.stderr);
      const doc = JSON.parse(b.stdout);
      assert.deepEqual(doc.params.placement, { name: 'remote', server: `${server}:5209` });
      const row = doc.results[0];
      const received = Number(row.received?.median ?? row.received);
      assert.ok(received > 0, JSON.stringify(row));
      // the server saw the client host's address
      assert.ok(
        log.some((l) => String(l.message).includes(client)),
        JSON.stringify(log),
      );

      // TCP: the far end (sink tcp) on the server host, blast on the client host
      const far = lab.spawn(
        'client',
        sockbuf('remote', server, '--', 'sink', 'tcp', '--reader', 'adaptive'),
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      // listen for its exit now: it may exit while the blast below is still being awaited
      const farExit = once(far, 'exit');
      const lines: Record<string, unknown>[] = [];
      const farRl = createInterface({ input: far.stdout as NodeJS.ReadableStream });
      const farReady = new Promise<Record<string, unknown>>((resolve) =>
        farRl.on('line', (l) => {
          const o = JSON.parse(l);
          lines.push(o);
          if (o.event === 'ready') resolve(o);
        }),
      );
      const fr = await farReady;
      assert.equal(fr.host, server);
      const bl = await lab.exec(
        'client',
        sockbuf('blast', 'tcp', '--to', `${server}:${fr.port}`, '--bytes', '4MiB', '--json'),
        {
          timeoutMs: 60_000,
        },
      );
      assert.equal(bl.code, 0, bl.stderr);
      const [code] = (await farExit) as [number];
      assert.equal(code, 0);
      const result = lines.find((l) => l.event === 'result');
      assert.ok(Number(result?.bytes) >= 4 << 20, JSON.stringify(result));
    } finally {
      serve.kill('SIGTERM');
      await once(serve, 'exit');
    }
  });
});
