import assert from 'node:assert/strict';
import { test } from 'node:test';
import { napNs } from '../../src/udp/clock.js';

test('napNs: the time the rest of a batch takes to arrive, capped by the coalesce window', () => {
  // 60 messages missing, 4 µs apart: 240 µs
  assert.equal(napNs(60, 4e3, 1e6), 240e3);
  // a slow flow: never past what is left of the window
  assert.equal(napNs(63, 1e6, 700e3), 700e3);
  // too short to sleep for: 0, the caller waits on the socket instead
  assert.equal(napNs(2, 4e3, 1e6), 0);
  assert.equal(napNs(60, 4e3, 10e3), 0);
});
