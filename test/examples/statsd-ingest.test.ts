// The StatsD ingest example, fed by the real hot-shots client over loopback: every metric sent is
// received and added up (the ingest imports 'sockbuf' itself, i.e. the built package: npm test builds).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import StatsD from 'hot-shots';
import { startIngest } from '../../examples/statsd-ingest/ingest.js';

async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
}

for (const maxBufferSize of [0, 1400]) {
  test(`statsd-ingest: hot-shots (maxBufferSize ${maxBufferSize}) → every metric received and added up`, async () => {
    const ingest = await startIngest({ listen: '127.0.0.1:0' });
    const client = new StatsD({
      host: '127.0.0.1',
      port: ingest.port,
      maxBufferSize,
      bufferFlushInterval: 5,
    });
    const n = 5000;
    let errors = 0;
    try {
      for (let i = 0; i < n; i++) {
        client.increment('requests', 1, (e) => {
          if (e) errors++;
        });
        client.timing('latency', i % 100);
        if (i % 10 === 0) client.gauge('queue', i);
        if (i % 100 === 0) await new Promise((r) => setImmediate(r)); // let the client's sends go out
      }
      client.set('users', 'alice');
      client.set('users', 'bob');
      await new Promise<void>((resolve) => client.close(() => resolve()));
      const sent = n + n + n / 10 + 2;
      const m = ingest.metrics;
      assert.ok(await until(() => m.lines >= sent), `received ${m.lines} of ${sent}`);
      await ingest.close();
      assert.equal(errors, 0);
      assert.equal(m.lines, sent, 'received = sent');
      assert.equal(m.bad, 0);
      assert.equal(m.counters.get('requests'), n);
      assert.deepEqual(m.timers.get('latency'), { count: n, sum: (n / 100) * 4950, min: 0, max: 99 });
      assert.equal(m.gauges.get('queue'), n - 10);
      assert.deepEqual([...(m.sets.get('users') ?? [])], ['alice', 'bob']);
      if (maxBufferSize) assert.ok(m.datagrams < m.lines / 10, 'buffered: many lines per datagram');
      else assert.equal(m.datagrams, m.lines, 'one metric per datagram');
    } finally {
      await ingest.close();
    }
  });
}
