// ChronoWindow (issue 44 item 5): the exporter's busy and limited ratios over 1-2 minutes, so that a
// socket busy in bursts every 3 s does not read busy 0 on each quiet 2 s scrape. Pure: samples in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChronoWindow } from '../../src/observe/chrono-window.js';
import type { DiagSocket } from '../../src/observe/sockdiag.js';

/** A TCP socket whose chrono counters (µs) are busy, rwnd-limited. */
const sock = (busyUs: number, rwndUs: number, cookie = 'c1') =>
  ({
    protocol: 6,
    cookie,
    stateName: 'established',
    tcpInfo: { busyTime: busyUs, rwndLimited: rwndUs, sndbufLimited: 0 },
  }) as unknown as DiagSocket;

test('a socket busy 0.6 s in every 3 s reads ~20 % busy on every 2 s sample, quiet ones too', () => {
  const w = new ChronoWindow(60_000);
  const busyAt = (ms: number) => Math.floor(ms / 3000) * 600_000 + Math.min(ms % 3000, 600) * 1000;
  const seen: number[] = [];
  for (let ms = 0; ms <= 240_000; ms += 2000) {
    const f = w.update([sock(busyAt(ms), busyAt(ms))], ms).get('c1');
    if (ms >= 10_000) seen.push(f?.busyRatio ?? -1);
  }
  for (const b of seen) assert.ok(b > 0.15 && b < 0.25, `busy ${b}`);
  // the window spans 60-120 s once it has run that long
  const f = w.update([sock(busyAt(242_000), busyAt(242_000))], 242_000).get('c1');
  assert.ok(f && f.seconds >= 60 && f.seconds <= 120, `${f?.seconds} s`);
  assert.equal(f?.rwndLimitedPct, 100);
});

test('the first sample gives no figure; a socket gone is forgotten; listeners and UDP are skipped', () => {
  const w = new ChronoWindow();
  assert.equal(w.update([sock(0, 0)], 0).size, 0);
  assert.equal(w.update([sock(1e6, 0)], 2000).get('c1')?.busyRatio, 0.5);
  w.update([], 4000);
  assert.equal(w.update([sock(2e6, 0)], 6000).size, 0, 'forgotten: starts again');
  const listener = { ...sock(1, 1, 'l'), stateName: 'listen' } as DiagSocket;
  const udp = { ...sock(1, 1, 'u'), protocol: 17 } as DiagSocket;
  w.update([listener, udp], 8000);
  assert.equal(w.update([listener, udp], 10_000).size, 0);
});
