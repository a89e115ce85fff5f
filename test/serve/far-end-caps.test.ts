// serve's caps on the far end's own data port, with the real far end (sockbuf sink) on loopback: a
// client that skips the control connection and sends a reverse hello straight to the far end gets
// nothing without the test's secret, and with it no more than serve's --max-bytes (the far end cuts
// the test and the result says why); a frame size past serve's cap is refused before anything is sent.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { encodeHello, type Hello } from '../../src/ends/hello.js';
import { ServeClient } from '../../src/serve/client.js';
import { startServer } from '../../src/serve/server.js';

const MAX_BYTES = 10 << 20;

/** Connects to the far end, sends `hello`, counts what comes back until it closes (at most 8 s). */
function pull(port: number, hello: Hello): Promise<{ bytes: number; closed: boolean }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write(encodeHello(hello)));
    const t = setTimeout(() => {
      s.destroy();
      resolve({ bytes, closed: false });
    }, 8000);
    s.on('data', (d: Buffer) => {
      bytes += d.length;
    });
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(t);
      resolve({ bytes, closed: true });
    });
  });
}

const reverse = (extra: Partial<Hello>): Hello => ({
  sockbuf: 1,
  test: 'hostile',
  stream: 0,
  streams: 1,
  reverse: true,
  size: 64 * 1024,
  bytes: 1 << 30,
  ...extra,
});

test('a reverse hello straight to the far end: refused without the secret, cut at --max-bytes with it', {
  timeout: 60_000,
}, async () => {
  const srv = await startServer({
    listen: { host: '127.0.0.1', port: 0 },
    maxDurationSeconds: 20,
    maxBytes: MAX_BYTES,
    idleSeconds: 10,
  });
  try {
    const c = await ServeClient.connect(srv.address);
    const ready = await c.startTest('tcp', { reader: 'adaptive', duration: '15s' });
    assert.equal(typeof ready.secret, 'string', 'the ready reply carries the test secret');
    assert.ok((ready.secret as string).length >= 32);

    // no secret, a wrong one: closed at once, not one byte sent
    const bare = await pull(ready.port, reverse({}));
    assert.deepEqual(bare, { bytes: 0, closed: true });
    const wrong = await pull(ready.port, reverse({ secret: 'f'.repeat(32) }));
    assert.deepEqual(wrong, { bytes: 0, closed: true });
    // the secret, but a frame past serve's 64 MiB cap: refused before anything is allocated or sent
    const huge = await pull(ready.port, reverse({ secret: ready.secret, size: 1 << 30 }));
    assert.deepEqual(huge, { bytes: 0, closed: true });

    // with the secret: 1 GiB asked, serve's 10 MiB given, then the far end cuts the test
    const got = await pull(ready.port, reverse({ secret: ready.secret }));
    assert.ok(got.closed, 'the far end closed the connection');
    assert.ok(got.bytes <= MAX_BYTES, `pulled ${got.bytes} bytes past --max-bytes ${MAX_BYTES}`);
    const result = await c.result();
    assert.match(String(result.stopped), /max-bytes/, JSON.stringify(result).slice(0, 2000));
    const stopped = result.lines.find((l) => (l as { event?: string }).event === 'stopped');
    assert.ok(stopped, 'the far end reported stopped');
    c.close();
  } finally {
    await srv.close();
  }
});
