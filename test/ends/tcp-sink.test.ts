// startTcpSink (the library's `sink tcp`) checks its own options: a bad combination is a UsageError
// naming the option as a program wrote it, before anything listens.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { UsageError } from '../../src/index.js';
import { parseReader } from '../../src/tcp/reader.js';
import { startTcpSink } from '../../src/tools.js';

test('startTcpSink: echo with verify is a UsageError naming echo', async () => {
  await assert.rejects(
    startTcpSink(
      {
        host: '127.0.0.1',
        port: 0,
        reader: parseReader('adaptive'),
        echo: true,
        verify: true,
        once: true,
        intervalSeconds: 1,
      },
      () => {},
    ),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'echo' &&
      /echo and verify cannot be combined/.test(err.message),
  );
});

test("startTcpSink's result says the CPU the sink used (cpuSeconds, from ready, as sink udp's)", {
  timeout: 30_000,
}, async () => {
  const sink = await startTcpSink(
    {
      host: '127.0.0.1',
      port: 0,
      reader: parseReader('adaptive'),
      verify: false,
      once: true,
      intervalSeconds: 1,
    },
    () => {},
  );
  const c = net.connect(sink.server.port, '127.0.0.1');
  c.end(Buffer.alloc(32 * 1024 * 1024, 1));
  const r = await sink.done;
  assert.equal(r.bytes, 32 * 1024 * 1024);
  const cpu = r.cpuSeconds as number;
  assert.ok(cpu > 0 && cpu < 60, `cpuSeconds ${cpu}`);
});
