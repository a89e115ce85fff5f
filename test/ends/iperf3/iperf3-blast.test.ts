// runIperf3Blast's refusals against loopback servers that answer as iperf3 does when it says no (and
// one that does not answer at all); the full test against the real iperf3 is test/cli/iperf3.test.ts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { runIperf3Blast } from '../../../src/ends/iperf3/iperf3-blast.js';
import {
  COOKIE_BYTES,
  encodeServerError,
  encodeState,
  IEUNIMP,
  State,
} from '../../../src/ends/iperf3/protocol.js';
import { EnvironmentError } from '../../../src/errors.js';
import { UsageError } from '../../../src/index.js';

/** A server that answers the first cookie with `answer` (nothing when undefined); the cookies it read. */
async function server(answer?: Buffer) {
  const cookies: Buffer[] = [];
  const srv = net.createServer((s) => {
    s.once('data', (d) => {
      cookies.push(d);
      if (answer) s.write(answer);
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { srv, port: (srv.address() as net.AddressInfo).port, cookies };
}

const blast = (port: number) =>
  runIperf3Blast(
    {
      host: '127.0.0.1',
      port,
      seconds: 1,
      parallel: 1,
      size: 131072,
      reverse: false,
      intervalSeconds: 1,
      answerSeconds: 0.3,
    },
    () => {},
  );

test('a busy server (ACCESS_DENIED), a refusal (SERVER_ERROR) and silence are environment errors naming the server', async () => {
  for (const [answer, want] of [
    [encodeState(State.ACCESS_DENIED), /127\.0\.0\.1:\d+ is busy running a test \(ACCESS_DENIED\)/],
    [encodeServerError(IEUNIMP), /refused the test: not implemented \(iperf3 error 13\)/],
    [undefined, /no iperf3 server at 127\.0\.0\.1:\d+: no answer .* within 0\.3 s/],
  ] as const) {
    const { srv, port, cookies } = await server(answer);
    try {
      await assert.rejects(blast(port), (e: Error) => {
        assert.ok(e instanceof EnvironmentError, e.message);
        assert.match(e.message, want);
        return true;
      });
      // the client spoke first, as iperf3 does: a 37-byte cookie ending in NUL
      assert.equal(cookies[0].length, COOKIE_BYTES);
      assert.equal(cookies[0][COOKIE_BYTES - 1], 0);
    } finally {
      srv.close();
    }
  }
});

test('runIperf3Blast: a write size past iperf3 -l (1 B to 1M) is a UsageError naming size, before any connect', async () => {
  for (const size of [0, 1024 * 1024 + 1, 1.5]) {
    await assert.rejects(
      // port 1: nothing listens, so only the check can answer first
      runIperf3Blast(
        { host: '127.0.0.1', port: 1, seconds: 1, parallel: 1, size, reverse: false, intervalSeconds: 1 },
        () => {},
      ),
      (err: unknown) =>
        err instanceof UsageError && err.option === 'size' && /as iperf3 -l/.test(err.message),
      String(size),
    );
  }
});

test('runIperf3Blast: parallel outside 1 to 128 is a UsageError naming parallel, before any connect', async () => {
  await assert.rejects(
    runIperf3Blast(
      {
        host: '127.0.0.1',
        port: 1,
        seconds: 1,
        parallel: 129,
        size: 1000,
        reverse: false,
        intervalSeconds: 1,
      },
      () => {},
    ),
    (err: unknown) => err instanceof UsageError && err.option === 'parallel',
  );
});

test('runIperf3Blast: an abort ends a run that waits on a silent server at once, its connection closed', async () => {
  const { srv, port } = await server(undefined);
  const closed = new Promise<void>((r) => srv.once('connection', (s) => s.once('close', () => r())));
  const ac = new AbortController();
  const t0 = performance.now();
  setTimeout(() => ac.abort(new Error('cap')), 200);
  try {
    await assert.rejects(
      runIperf3Blast(
        {
          host: '127.0.0.1',
          port,
          seconds: 5,
          parallel: 1,
          size: 131072,
          reverse: false,
          intervalSeconds: 1,
          signal: ac.signal,
        },
        () => {},
      ),
    );
    assert.ok(performance.now() - t0 < 2000, `ended ${performance.now() - t0} ms after the start`);
    await closed;
  } finally {
    srv.close();
  }
});
