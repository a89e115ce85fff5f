// Node's dgram errors as dgram-errors.ts builds them (pure), each checked against the error node:dgram
// itself throws for the same call where one can be provoked.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import {
  errBadPort,
  errBufferSize,
  errnoException,
  exceptionWithHostPort,
  received,
  validatePort,
} from '../../src/udp/dgram-errors.js';

const nodeThrows = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as Error & { code: string };
  }
  throw new Error('node:dgram did not throw');
};

test('ERR_SOCKET_BAD_PORT: the class, code, message and name line of node:dgram', () => {
  const s = dgram.createSocket('udp4');
  for (const port of [70000, -1, 0, '65536', 1.5, undefined, null, {}] as unknown[]) {
    const node = nodeThrows(() => s.send('x', port as number, '127.0.0.1'));
    const ours = nodeThrows(() => validatePort(port, false));
    assert.ok(ours instanceof RangeError);
    assert.deepEqual([ours.name, ours.code, ours.message], [node.name, node.code, node.message]);
    assert.equal(ours.stack?.split('\n')[0], node.stack?.split('\n')[0]);
  }
  s.close();
  assert.equal(errBadPort(-5, true).message, 'Port should be >= 0 and < 65536. Received type number (-5).');
  assert.equal(validatePort(' 42 ', true), 42);
});

test('received(): how Node shows a value in its messages', () => {
  assert.equal(received(undefined), 'undefined');
  assert.equal(received('a'.repeat(40)), `type string ('${'a'.repeat(24)}...)`);
  assert.equal(received([]), 'an instance of Array');
  assert.equal(received(Object.create(null)), '[Object: null prototype] {}');
});

test('errno errors: the negative errno, code, syscall, address and port as libuv reports them', () => {
  assert.deepEqual(
    {
      ...exceptionWithHostPort(-90, 'send', '127.0.0.1', 9),
      message: exceptionWithHostPort(-90, 'send', '::1', 9).message,
    },
    {
      errno: -90,
      code: 'EMSGSIZE',
      syscall: 'send',
      address: '127.0.0.1',
      port: 9,
      message: 'send EMSGSIZE ::1:9',
    },
  );
  assert.equal(exceptionWithHostPort(-99, 'bind', '192.0.2.1', 0).message, 'bind EADDRNOTAVAIL 192.0.2.1');
  assert.equal('port' in exceptionWithHostPort(-99, 'bind', '192.0.2.1', 0), false);
  assert.equal(errnoException(-9, 'setTTL').message, 'setTTL EBADF');
  const e = errBufferSize(-9, 'send');
  assert.deepEqual([e.name, (e as Error & { code: string }).code], ['SystemError', 'ERR_SOCKET_BUFFER_SIZE']);
});
