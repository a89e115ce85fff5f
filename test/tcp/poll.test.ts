import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { POLL_REST_US, POLL_SPAN_US, POLL_START_BYTES, PollWindow, pollerStats } from '../../src/tcp/poll.js';
import { parseReader, pollBound, Reader, resolveReader } from '../../src/tcp/reader.js';
import { writeBulk } from '../lib/bulk.js';

const BIG = POLL_START_BYTES;

test('polling starts on a big read that came within the bound of the last, and grows like haltpoll', () => {
  const w = new PollWindow();
  assert.equal(w.read(0, BIG, 200, false), false, 'a first read has no gap to judge');
  assert.equal(w.read(100, BIG, 200, false), true);
  assert.equal(w.window, 50, 'starts at a quarter of the bound');
  assert.equal(w.turn(140), true, 'polls while nothing has been read for less than the window');
  assert.equal(w.turn(151), false, 'stops past it');
  // the next read came 30 µs after polling stopped: a longer window would have caught it
  assert.equal(w.read(181, BIG, 200, false), true);
  assert.equal(w.window, 100);
  assert.equal(w.turn(182), true);
  assert.equal(w.read(190, 10, 200, true), false, 'a read while polling starts nothing new');
  assert.equal(w.turn(289), true, 'a small read keeps polling going');
  assert.equal(w.turn(291), false);
  w.read(300, BIG, 200, false);
  assert.equal(w.window, 200);
  w.read(400, BIG, 200, false);
  assert.equal(w.window, 200, 'never past the bound');
});

test('a long sleep shrinks the window, to nothing; small reads never start polling', () => {
  const w = new PollWindow();
  w.read(0, BIG, 200, false);
  w.read(100, BIG, 200, false);
  w.read(200, BIG, 200, false);
  w.read(300, BIG, 200, false);
  assert.equal(w.window, 200);
  assert.equal(w.read(10_000, BIG, 200, false), true, 'one long sleep halves it');
  assert.equal(w.window, 100);
  w.read(20_000, BIG, 200, false);
  assert.equal(w.read(30_000, BIG, 200, false), true);
  assert.equal(w.window, 25);
  assert.equal(w.read(40_000, BIG, 200, false), false, 'below an eighth of the bound: off');
  assert.equal(w.window, 0);
  const small = new PollWindow();
  for (let t = 0; t < 1000; t += 10) assert.equal(small.read(t, BIG - 1, 200, false), false);
  assert.equal(small.window, 200, 'the window is kept, but request-sized reads do not poll');
  assert.equal(new PollWindow().read(0, BIG, 0, false), false, 'poll=0: never');
});

test('polling that finds nothing for more than two thirds of a span rests', () => {
  const w = new PollWindow();
  w.read(0, BIG, 200, false);
  assert.equal(w.read(10, BIG, 200, false), true);
  // turns every 10 µs, a read every 40 µs: three quarters of polling's time finds nothing
  let t = 10;
  let going = true;
  while (going && t < 10 + POLL_SPAN_US) {
    t += 10;
    if (t % 40 === 0) w.read(t, 1000, 200, true);
    going = w.turn(t);
  }
  assert.equal(going, false, 'rested at the end of the span');
  assert.equal(w.rests, 1);
  assert.ok(t >= 10 + POLL_SPAN_US - 10);
  assert.equal(w.read(t + 20, BIG, 200, false), false, 'no start while resting');
  assert.equal(w.read(t + POLL_REST_US + 20, BIG, 200, false), true, 'after the rest it may start again');

  // turns every 10 µs, a read every 25 µs: 60 % of polling's time finds nothing, within the cap
  const busy = new PollWindow();
  busy.read(0, BIG, 200, false);
  busy.read(10, BIG, 200, false);
  for (let u = 15; u < 3 * POLL_SPAN_US; u += 5) {
    if (u % 25 === 0) busy.read(u, 1000, 200, true);
    if (u % 10 === 0) assert.equal(busy.turn(u), true, `still polling at ${u}`);
  }
  assert.equal(busy.rests, 0);
});

test('the span adds up polling time over several starts, not the sleeps between them', () => {
  const w = new PollWindow();
  w.read(0, BIG, 200, false);
  let t = 0;
  // each start: one read, then 150 µs of empty turns until the window (≤ 200 µs) ends, then a sleep
  for (let i = 0; i < 200 && w.rests === 0; i++) {
    t += 100;
    w.read(t, BIG, 200, false);
    do t += 10;
    while (w.turn(t));
  }
  assert.equal(w.rests, 1, 'wasteful polling rests even when no single start lasts a span');
});

test('by default only a loopback peer polls; an explicit bound applies to any peer; fixed never polls', () => {
  const adaptive = parseReader('adaptive');
  assert.equal(pollBound(adaptive, '127.0.0.1'), 200);
  assert.equal(pollBound(adaptive, '::1'), 200);
  assert.equal(pollBound(adaptive, '10.1.2.3'), 0);
  assert.equal(pollBound(adaptive, undefined), 0);
  assert.equal(pollBound(parseReader('adaptive:poll=50us'), '10.1.2.3'), 50);
  assert.equal(pollBound(parseReader('adaptive:poll=0'), '127.0.0.1'), 0);
  assert.equal(pollBound(parseReader('fixed:64K'), '127.0.0.1'), 0);
  assert.equal(pollBound(parseReader('data'), '127.0.0.1'), 0);
});

/** Sends `bytes` from another connection end as fast as the kernel takes them. */
async function drain(reader: string, bytes: number): Promise<number> {
  const srv = net.createServer((s) => writeBulk(s, bytes, 7));
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const r = new Reader(resolveReader(reader === 'adaptive' ? 'adaptive' : { adaptive: { poll: 0 } }));
  let got = 0;
  r.consumer = (c) => {
    got += c.length;
  };
  const port = (srv.address() as net.AddressInfo).port;
  const sock = net.connect({ port, host: '127.0.0.1', onread: r.onread() } as net.NetConnectOpts);
  r.attach(sock);
  await once(sock, 'close');
  srv.close();
  return got;
}

test("a hot loopback stream: the adaptive reader's prober tries polling; polling stops when the stream ends", {
  timeout: 60_000,
}, async () => {
  const long = 256 << 20;
  const before = pollerStats();
  assert.equal(await drain('adaptive:poll=0', long), long);
  assert.equal(pollerStats().starts, before.starts, 'poll=0 never polls');
  assert.equal(await drain('adaptive', long), long);
  const after = pollerStats();
  assert.ok(after.starts > before.starts, `started ${after.starts - before.starts} times`);
  assert.ok(after.turns > before.turns);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(pollerStats().polling, false, 'nothing read for longer than the window: stopped');
});
