// --listen / --to parsing: addresses and host names are kept as written (names resolve at the socket).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { formatHostPort, parseListen, parseTo } from '../../src/policy/address.js';

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
