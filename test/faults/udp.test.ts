// Fault: the consumer of a batch receiver stalls for 5 s under load. The reader must not block on it:
// it keeps taking datagrams from the kernel and counts what the full ring cannot hold (userspace
// drops), delivery resumes after the stall, and sent = received + kernel + userspace drops + truncated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUdpBlast } from '../../src/ends/udp-blast.js';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { accounted, consume, until } from '../udp/helpers.js';

const STALL_MS = 5000;

test('a consumer stalled 5 s under load (onFull: drop): the reader keeps reading and counts drops; delivery recovers; every datagram accounted', {
  timeout: 60_000,
}, async () => {
  const r = await createUdpReceiver({
    listen: '127.0.0.1:0',
    gro: false,
    ring: 4,
    batch: 64,
    onFull: 'drop',
  });
  let stalled = false;
  let stallStarted: (() => void) | undefined;
  const inStall = new Promise<void>((res) => {
    stallStarted = res;
  });
  let after = 0;
  const c = consume(r, {
    each: async (b) => {
      if (!stalled) {
        stalled = true;
        stallStarted?.();
        await sleep(STALL_MS);
      } else after += b.count;
    },
  });
  const s = await createUdpBlast({ to: `127.0.0.1:${r.port}`, size: 64, rate: '50k' });
  try {
    const sending = s.run({ duration: STALL_MS + 1500 });
    await inStall;
    await sleep(1000);
    const early = r.stats();
    await sleep(2500);
    const late = r.stats();
    // while the consumer slept, the reader went on taking datagrams from the socket and dropping them
    assert.ok(
      late.userspaceDrops > early.userspaceDrops,
      `reader kept reading: ${early.userspaceDrops} → ${late.userspaceDrops}`,
    );
    assert.equal(late.received, early.received, 'nothing delivered to a stalled consumer');
    const res = await sending;
    await until(() => accounted(r) === res.sent && r.stats().queued === 0);
    await r.close();
    await c.done;
    const st = r.stats();
    assert.ok(after > 0, 'delivery resumed after the stall');
    assert.equal(accounted(r), res.sent, JSON.stringify(st));
  } finally {
    s.close();
    await r.close();
  }
});
