import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { Destinations } from '../../src/udp/send-targets.js';

test('one destination object per address and port, whatever shape the target has', () => {
  const d = new Destinations();
  const a = d.get({ address: '127.0.0.1', port: 9 }, 'to');
  assert.equal(d.get({ host: '127.0.0.1', port: 9 }, 'to'), a);
  assert.equal(d.get('127.0.0.1:9', 'to'), a);
  assert.equal(d.get({ address: '127.0.0.1', port: 9 }, 'to'), a, 'a new rinfo for the same place');
  assert.notEqual(d.get('127.0.0.1:10', 'to'), a);
  const six = d.get('[::1]:9', 'to');
  assert.equal(six.sa.length, 28);
  assert.equal(a.sa.length, 16);
  assert.equal(a.sa.readUInt16BE(2), 9);
});

test('a target that is not an address and port is a UsageError naming the option', () => {
  const d = new Destinations();
  for (const [t, re] of [
    ['example.com:9', /to\[3\]: 'example.com' \(expected an IP address/],
    [{ address: '127.0.0.1', port: 70000 }, /to\[3\]: '70000'/],
    [{ address: '127.0.0.1', port: 1.5 }, /to\[3\]: '1.5'/],
    ['127.0.0.1', /to\[3\]: '127.0.0.1'/],
    [null, /to\[3\]: 'null'/],
  ] as const)
    assert.throws(
      () => d.get(t as never, 'to[3]'),
      (e: unknown) => e instanceof UsageError && re.test(e.message) && e.option === 'to[3]',
    );
});
