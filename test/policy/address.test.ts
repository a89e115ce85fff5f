// --listen / --to parsing: addresses and host names are kept as written (names resolve at the socket).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { formatHostPort, isLoopback, parseListen, parseTo } from '../../src/policy/address.js';

test('host names are taken as written; IPv6 in brackets both ways', () => {
  assert.deepEqual(parseTo('vm:5203'), { host: 'vm', port: 5203 });
  assert.deepEqual(parseTo('localhost:80'), { host: 'localhost', port: 80 });
  assert.deepEqual(parseTo('db-1.example.org:5201'), { host: 'db-1.example.org', port: 5201 });
  assert.deepEqual(parseListen('[::1]:5203'), { host: '::1', port: 5203 });
  assert.deepEqual(parseListen('5203'), { host: '127.0.0.1', port: 5203 });
  assert.equal(formatHostPort({ host: '::1', port: 5203 }), '[::1]:5203');
  assert.equal(formatHostPort({ host: 'vm', port: 5203 }), 'vm:5203');
});

test('what is neither an address nor a name is a usage error naming the option', () => {
  for (const bad of ['no such host:1', '1.2.3.4.5:1', '-vm:1', 'a..b:1', ':1', 'vm:x', 'vm:70000'])
    assert.throws(
      () => parseTo(bad, '--to'),
      (e: unknown) => e instanceof UsageError && e.message.includes(`--to: '${bad}'`),
      bad,
    );
});

test('isLoopback: 127.0.0.0/8, ::1 and mapped 127.x; nothing else', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::FFFF:127.0.0.2'])
    assert.equal(isLoopback(a), true, a);
  for (const a of [undefined, '', '10.0.0.1', '128.0.0.1', '::2', '::ffff:10.0.0.1', 'fe80::1', '1127.0.0.1'])
    assert.equal(isLoopback(a), false, String(a));
});
