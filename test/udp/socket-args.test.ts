// node:dgram's send() and bind() overloads as socket-args.ts reads them (pure; the same calls against
// real sockets, node:dgram beside, are in socket.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readBindArgs, readSendArgs } from '../../src/udp/socket-args.js';

const connectedError = () => new Error('connected');
const text = (a: { data: Uint8Array }) => Buffer.from(a.data).toString();

test('send(msg, port, address, cb), send(msg, offset, length, port, address, cb), send(msg, port, cb)', () => {
  const cb = () => {};
  const a = readSendArgs(['hi', 9, '127.0.0.1', cb], false, connectedError);
  assert.deepEqual({ ...a, data: text(a) }, { data: 'hi', port: 9, address: '127.0.0.1', callback: cb });
  const b = readSendArgs(['hello world', 6, 5, 9, '::1', cb], false, connectedError);
  assert.deepEqual([text(b), b.port, b.address, b.callback], ['world', 9, '::1', cb]);
  const c = readSendArgs([Buffer.from('x'), '9', cb], false, connectedError);
  assert.deepEqual([c.port, c.address, c.callback], [9, undefined, cb]);
  const d = readSendArgs([['a', Buffer.from('b'), new Uint16Array([0x6463])], 9], false, connectedError);
  assert.equal(text(d), 'abcd');
});

test('a connected socket: send(msg, cb) and send(msg, offset, length, cb); a port or address throws', () => {
  const cb = () => {};
  const a = readSendArgs(['hi', cb], true, connectedError);
  assert.deepEqual([text(a), a.port, a.callback], ['hi', 0, cb]);
  const b = readSendArgs(['hello', 1, 3, cb], true, connectedError);
  assert.deepEqual([text(b), b.callback], ['ell', cb]);
  assert.throws(() => readSendArgs(['hi', 0, 2, 9, '127.0.0.1'], true, connectedError), /connected/);
});

test('bad ports, buffers and bounds throw what Node throws', () => {
  assert.throws(() => readSendArgs(['x', 65536, 'h'], false, connectedError), {
    code: 'ERR_SOCKET_BAD_PORT',
  });
  assert.throws(() => readSendArgs(['x', 1.5, 'h'], false, connectedError), { code: 'ERR_SOCKET_BAD_PORT' });
  assert.throws(() => readSendArgs([{}, 9, 'h'], false, connectedError), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => readSendArgs(['ab', 3, 0, 9, 'h'], false, connectedError), {
    code: 'ERR_BUFFER_OUT_OF_BOUNDS',
    message: '"offset" is outside of buffer bounds',
  });
});

test('bind(port, address, cb), bind(options, cb), bind(cb), bind()', () => {
  const cb = () => {};
  assert.deepEqual(readBindArgs([1234, '::1', cb]), {
    port: 1234,
    address: '::1',
    exclusive: false,
    fd: undefined,
    callback: cb,
  });
  assert.deepEqual(readBindArgs([{ port: 5, address: '127.0.0.1', exclusive: true }, cb]), {
    port: 5,
    address: '127.0.0.1',
    exclusive: true,
    fd: undefined,
    callback: cb,
  });
  assert.deepEqual(readBindArgs([cb]), {
    port: 0,
    address: '',
    exclusive: false,
    fd: undefined,
    callback: cb,
  });
  assert.deepEqual(readBindArgs([]), {
    port: undefined,
    address: '',
    exclusive: false,
    fd: undefined,
    callback: undefined,
  });
});
