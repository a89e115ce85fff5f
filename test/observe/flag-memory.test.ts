// FlagMemory's long hold (issue 44 item 5): a pinned-buffer flag stays through quiet samples while the
// socket is open and its buffer unchanged, for PIN_HOLD_MS after its last finding. Pure: rows in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FlagKind, InspectedSocket } from '../../src/observe/analyze.js';
import { FlagMemory, PIN_HOLD_MS } from '../../src/observe/flag-memory.js';

const row = (
  kind: FlagKind | undefined,
  o: { rcvbuf?: number; cookie?: string; interval?: boolean } = {},
): InspectedSocket => ({
  protocol: 'tcp',
  family: 4,
  state: 'established',
  role: 'accepted',
  localAddress: '127.0.0.1',
  localPort: 5672,
  remoteAddress: '127.0.0.1',
  remotePort: 40000,
  inode: 1,
  cookie: o.cookie ?? 'c1',
  rcvbufBytes: o.rcvbuf ?? 16384,
  sndWscale: 7,
  receivedBytesPerSecond: 0, // idle: quiet between bursts
  intervalSeconds: o.interval === false ? undefined : 2,
  limited: kind !== undefined,
  flags: kind ? [{ kind, reason: 'receive buffer 16 KiB' }] : [],
});

const flagsOf = (memory: FlagMemory, r: InspectedSocket, at: number) => {
  memory.apply([r], at);
  return r.flags.map((f) => f.reason).join() || '-';
};

test('a pinned-rcvbuf flag holds through idle samples for PIN_HOLD_MS after its last finding, marked (held)', () => {
  const m = new FlagMemory();
  assert.equal(flagsOf(m, row('pinned-rcvbuf'), 0), 'receive buffer 16 KiB');
  // idle (nothing moves), not found again: held, far past the short hold's 3 samples
  for (let t = 2000; t < PIN_HOLD_MS; t += 60_000)
    assert.equal(flagsOf(m, row(undefined), t), '(held) receive buffer 16 KiB', `at ${t} ms`);
  // found again in a burst: the hold starts over
  assert.equal(flagsOf(m, row('pinned-rcvbuf'), PIN_HOLD_MS), 'receive buffer 16 KiB');
  assert.equal(flagsOf(m, row(undefined), 2 * PIN_HOLD_MS - 1000), '(held) receive buffer 16 KiB');
  assert.equal(flagsOf(m, row(undefined), 2 * PIN_HOLD_MS + 1000), '-', 'past the hold');
});

test('the hold ends when the socket closes or its buffer changes', () => {
  const m = new FlagMemory();
  flagsOf(m, row('pinned-rcvbuf'), 0);
  assert.equal(flagsOf(m, row(undefined, { rcvbuf: 262144 }), 2000), '-', 'the buffer grew: the pin is gone');
  flagsOf(m, row('pinned-rcvbuf'), 4000);
  m.apply([], 6000); // the socket closed
  assert.equal(flagsOf(m, row(undefined), 8000), '-');
  // another socket (another cookie) never inherits a flag
  flagsOf(m, row('pinned-rcvbuf'), 10_000);
  assert.equal(flagsOf(m, row(undefined, { cookie: 'c2' }), 12_000), '-');
});

test("a finding over the connection's life (the first sample, no interval) gets only the short hold", () => {
  const m = new FlagMemory();
  flagsOf(m, row('pinned-rcvbuf', { interval: false }), 0);
  assert.equal(flagsOf(m, row(undefined), 2000), '-', 'idle: dropped at once, as before');
});

test('other kinds keep the short hold: a stalled reader is not held while idle', () => {
  const m = new FlagMemory();
  flagsOf(m, row('stalled-reader'), 0);
  assert.equal(flagsOf(m, row(undefined), 2000), '-');
});
