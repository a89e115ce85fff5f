import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { inspectSockets } from '../../src/observe/inspect.js';
import { formatInspectSample, inspectDocument } from '../../src/observe/inspect-format.js';

const socket: InspectedSocket = {
  protocol: 'tcp',
  family: 6,
  state: 'established',
  role: 'client',
  localAddress: '::1',
  localPort: 5201,
  remoteAddress: '::1',
  remotePort: 40000,
  inode: 1,
  cookie: '1',
  pid: 42,
  command: 'node',
  rttUs: 1500,
  rcvbufBytes: 131072,
  rmemBytes: 0,
  busyMs: 1000,
  rwndLimitedPct: 97,
  sndbufLimitedPct: 0,
  limited: true,
  flags: [{ kind: 'rwnd-limited', reason: 'the receive window limited it 97 % of the time' }],
};

test('a sample as a table: a row per socket (IPv6 in brackets), then why each flagged one is flagged', () => {
  const text = formatInspectSample({ time: '2026-01-01T00:00:00.000Z', sockets: [socket] });
  assert.match(text, /tcp\s+established\s+\[::1\]:5201\s+\[::1\]:40000\s+42\/node\s+1\.50ms/);
  assert.match(text, /\s97%\s+0%\s+rwnd-limited$/m, 'the flag column names the kind');
  assert.match(text, /1 sockets; limited shares of busy time since open/);
  assert.match(text, /^! tcp \[::1\]:5201 → \[::1\]:40000: the receive window limited it/m);
  const doc = inspectDocument({ time: 't', intervalSeconds: 1, sockets: [socket] });
  assert.deepEqual(Object.keys(doc), ['schema', 'command', 'time', 'intervalSeconds', 'sockets']);
});

test('a state that is no socket state is a usage error naming the option', () => {
  assert.throws(
    () => inspectSockets({ state: 'open' }),
    (e) => e instanceof UsageError && e.option === 'state' && /'open'/.test(e.message),
  );
});
