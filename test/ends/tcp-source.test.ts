// runTcpBlast (the library's `blast tcp`) checks its own options: a bad combination is a UsageError
// naming the option as a program wrote it, before any stream connects (port 1: nothing listens).
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { UsageError } from '../../src/index.js';
import { runTcpBlast } from '../../src/tools.js';

const base = { host: '127.0.0.1', port: 1, size: 4096, parallel: 1, reverse: false, intervalSeconds: 1 };

test('runTcpBlast: bytes with seconds is a UsageError naming bytes', async () => {
  await assert.rejects(
    runTcpBlast({ ...base, bytes: 1024, seconds: 1 }, () => {}),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'bytes' &&
      /give bytes or seconds, not both/.test(err.message),
  );
});

test('runTcpBlast: raw with reverse is a UsageError naming raw', async () => {
  await assert.rejects(
    runTcpBlast({ ...base, raw: true, reverse: true }, () => {}),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'raw' &&
      /raw and reverse cannot be combined/.test(err.message),
  );
});

test('runTcpBlast: parallel outside 1 to 128 is a UsageError naming parallel', async () => {
  for (const parallel of [0, 129, 1.5]) {
    await assert.rejects(
      runTcpBlast({ ...base, parallel }, () => {}),
      (err: unknown) => err instanceof UsageError && err.option === 'parallel',
      String(parallel),
    );
  }
});

test('runTcpBlast against a real sink: the result has the sender tcp_info and limited shares; an abort ends it at once', async () => {
  const received: number[] = [];
  const sink = net.createServer((s) => {
    let n = 0;
    s.on('data', (d) => {
      n += d.length;
    });
    s.on('end', () => {
      received.push(n);
      s.end();
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const port = (sink.address() as net.AddressInfo).port;
  try {
    const r = await runTcpBlast({ ...base, port, raw: true, seconds: 0.3 }, () => {});
    const s = r.perStream[0];
    assert.ok((r.bytes as number) > 0);
    assert.equal(received[0], r.bytes);
    assert.ok((s.rttUs as number) > 0, 'tcp_info of the sending socket');
    assert.equal(typeof s.totalRetrans, 'number');
    assert.deepEqual(s.buffers, {
      rcvbuf: { requested: 'auto', autotuning: true },
      sndbuf: { requested: 'auto', autotuning: true },
    });
    assert.equal(typeof r.rwndLimitedPct, 'number');
    assert.equal(typeof r.sndbufLimitedPct, 'number');

    const ac = new AbortController();
    const t0 = performance.now();
    setTimeout(() => ac.abort(new Error('cap')), 200);
    await assert.rejects(runTcpBlast({ ...base, port, raw: true, seconds: 30, signal: ac.signal }, () => {}));
    assert.ok(performance.now() - t0 < 2000, `ended ${performance.now() - t0} ms after the start`);
  } finally {
    sink.close();
  }
});
