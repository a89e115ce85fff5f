// sockbuf/dgram's errors against node:dgram's, case by case: the same class, code, message, errno,
// syscall, address and port for a port out of range, a payload over 65507 bytes, a send after close,
// bind failures, calls before bind, bad arguments and multicast membership.
import { attempt, type Case, conformance, describe, next, peer, tick } from './dgram-conformance.js';

const BAD_PORT = (received: string, op = '>') => ({
  class: 'RangeError',
  name: 'RangeError',
  code: 'ERR_SOCKET_BAD_PORT',
  message: `Port should be ${op} 0 and < 65536. Received ${received}.`,
});
const NOT_RUNNING = {
  class: 'Error',
  name: 'Error',
  code: 'ERR_SOCKET_DGRAM_NOT_RUNNING',
  message: 'Not running',
};
const EBADF = (syscall: string) => ({
  class: 'Error',
  name: 'Error',
  code: 'EBADF',
  message: `${syscall} EBADF`,
  errno: -9,
  syscall,
});

const closeAll = (...ss: { close(cb: () => void): unknown }[]) =>
  Promise.all(ss.map((s) => new Promise<void>((r) => s.close(() => r()))));

const cases: Case[] = [
  {
    name: 'send with a bad port, buffer, bounds or address throws at once, and binds nothing',
    async run(create) {
      const s = create('udp4');
      const out = [
        attempt(() => s.send('x', 70000, '127.0.0.1')),
        attempt(() => s.send('x')),
        attempt(() => s.send('x', 0, '127.0.0.1')),
        attempt(() => s.send('x', -1, '127.0.0.1')),
        attempt(() => s.send('x', '65536' as unknown as number, 'localhost')),
        attempt(() => s.send(123 as unknown as string, 1234, '127.0.0.1')),
        attempt(() => s.send([1] as unknown as string[], 1234)),
        attempt(() => s.send(Buffer.from('hi'), 5, 1, 1234, '127.0.0.1')),
        attempt(() => s.send(Buffer.from('hi'), 1, 5, 1234, '127.0.0.1')),
        attempt(() => s.send('x', 1234, 5 as unknown as string)),
        attempt(() => s.address()),
      ];
      s.close();
      return out;
    },
    expect: [
      BAD_PORT('type number (70000)'),
      BAD_PORT('undefined'),
      BAD_PORT('type number (0)'),
      BAD_PORT('type number (-1)'),
      BAD_PORT("type string ('65536')"),
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message:
          'The "buffer" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received type number (123)',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message:
          'The "buffer list arguments" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received an instance of Array',
      },
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_BUFFER_OUT_OF_BOUNDS',
        message: '"offset" is outside of buffer bounds',
      },
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_BUFFER_OUT_OF_BOUNDS',
        message: '"length" is outside of buffer bounds',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: 'The "address" argument must be of type string. Received type number (5)',
      },
      EBADF('getsockname'),
    ],
  },
  {
    name: 'a payload over 65507 bytes: EMSGSIZE to the callback (bound or not), nothing without one',
    async run(create) {
      const p = await peer();
      const port = p.address().port;
      const seen: unknown[] = [];
      p.on('message', (m) => seen.push(`peer got ${m.length}`));
      const s = create('udp4');
      s.on('error', (e) => seen.push(['error event', describe(e)]));
      s.send(Buffer.alloc(65508), port, '127.0.0.1', (e, n) => seen.push(['unbound', describe(e), n]));
      await next(s, 'listening');
      s.send(Buffer.alloc(65508), port, '127.0.0.1');
      s.send(Buffer.alloc(70000), port, '127.0.0.1', (e) => seen.push(['bound', describe(e)]));
      s.send(Buffer.alloc(65507), port, '127.0.0.1', (e, n) => seen.push(['largest', e, n]));
      for (let i = 0; i < 50 && seen.length < 4; i++) await tick(10);
      await closeAll(s, p);
      return seen;
    },
    expect: [
      [
        'unbound',
        {
          class: 'Error',
          name: 'Error',
          code: 'EMSGSIZE',
          message: 'send EMSGSIZE 127.0.0.1:PORT',
          errno: -90,
          syscall: 'send',
          address: '127.0.0.1',
          port: 'PORT',
        },
        undefined,
      ],
      [
        'bound',
        {
          class: 'Error',
          name: 'Error',
          code: 'EMSGSIZE',
          message: 'send EMSGSIZE 127.0.0.1:PORT',
          errno: -90,
          syscall: 'send',
          address: '127.0.0.1',
          port: 'PORT',
        },
      ],
      ['largest', null, 65507],
      'peer got 65507',
    ],
  },
  {
    name: 'send after close: ERR_SOCKET_DGRAM_NOT_RUNNING (a bad port is reported first, as Node checks it first)',
    async run(create) {
      const s = create('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      await closeAll(s);
      const u = create('udp4');
      u.close();
      return [
        attempt(() => s.send('x', 1234, '127.0.0.1')),
        attempt(() => s.send('x', 70000, '127.0.0.1')),
        attempt(() => u.send('x', 1234, '127.0.0.1', () => {})),
        attempt(() => u.bind(0)),
        attempt(() => u.connect(1234)),
      ];
    },
    expect: [NOT_RUNNING, BAD_PORT('type number (70000)'), NOT_RUNNING, NOT_RUNNING, NOT_RUNNING],
  },
  {
    name: "bind errors: EADDRINUSE and EADDRNOTAVAIL as 'error', a name that does not resolve, bind twice",
    async run(create) {
      const p = await peer();
      const seen: unknown[] = [];
      const a = create('udp4');
      a.bind(p.address().port, '127.0.0.1');
      seen.push(describe((await next(a, 'error'))[0]));
      const b = create('udp4');
      b.bind(0, '192.0.2.1');
      seen.push(describe((await next(b, 'error'))[0]));
      const c = create('udp4');
      c.bind(0, 'name.invalid');
      const e = (await next(c, 'error'))[0] as Error & { code: string; syscall: string };
      seen.push([e.code, e.syscall]);
      // with a bind callback, node:dgram's own 'error' listener takes the error: nothing is thrown
      const d = create('udp4');
      d.bind(p.address().port, '127.0.0.1', () => seen.push('bound?'));
      await tick(50);
      const f = create('udp4');
      f.bind(0, '127.0.0.1');
      seen.push(attempt(() => f.bind(0)));
      await next(f, 'listening');
      seen.push(attempt(() => f.bind(0)));
      await closeAll(a, b, c, d, f, p);
      return seen;
    },
    expect: [
      {
        class: 'Error',
        name: 'Error',
        code: 'EADDRINUSE',
        message: 'bind EADDRINUSE 127.0.0.1:PORT',
        errno: -98,
        syscall: 'bind',
        address: '127.0.0.1',
        port: 'PORT',
      },
      {
        class: 'Error',
        name: 'Error',
        code: 'EADDRNOTAVAIL',
        message: 'bind EADDRNOTAVAIL 192.0.2.1',
        errno: -99,
        syscall: 'bind',
        address: '192.0.2.1',
      },
      ['ENOTFOUND', 'getaddrinfo'],
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_ALREADY_BOUND', message: 'Socket is already bound' },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_ALREADY_BOUND', message: 'Socket is already bound' },
    ],
  },
  {
    name: 'before bind: address, buffer sizes, TTL and broadcast say EBADF; bad types and sizes',
    async run(create) {
      const s = create('udp4');
      const out = [
        attempt(() => s.address()),
        attempt(() => s.getRecvBufferSize()),
        attempt(() => s.setSendBufferSize(1024)),
        attempt(() => s.setTTL(5)),
        attempt(() => s.setBroadcast(true)),
        attempt(() => s.setRecvBufferSize(-1)),
        attempt(() => s.setTTL('5' as unknown as number)),
        attempt(() => s.connect(0)),
        attempt(() => s.connect(1234, 5 as unknown as string)),
        attempt(() => create('udp5' as 'udp4')),
        attempt(() => s.addMembership('')),
      ];
      s.close();
      return out;
    },
    expect: [
      EBADF('getsockname'),
      {
        class: 'Error',
        name: 'SystemError',
        code: 'ERR_SOCKET_BUFFER_SIZE',
        message: 'Could not get or set buffer size: uv_recv_buffer_size returned EBADF (bad file descriptor)',
        errno: -9,
        syscall: 'uv_recv_buffer_size',
      },
      {
        class: 'Error',
        name: 'SystemError',
        code: 'ERR_SOCKET_BUFFER_SIZE',
        message: 'Could not get or set buffer size: uv_send_buffer_size returned EBADF (bad file descriptor)',
        errno: -9,
        syscall: 'uv_send_buffer_size',
      },
      EBADF('setTTL'),
      EBADF('setBroadcast'),
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_SOCKET_BAD_BUFFER_SIZE',
        message: 'Buffer size must be a positive integer',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: `The "ttl" argument must be of type number. Received type string ('5')`,
      },
      BAD_PORT('type number (0)'),
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: 'The "address" argument must be of type string. Received type number (5)',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_SOCKET_BAD_TYPE',
        message: 'Bad socket type specified. Valid types are: udp4, udp6',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_MISSING_ARGS',
        message: 'The "multicastAddress" argument must be specified',
      },
    ],
  },
  {
    name: "a name that does not resolve: ENOTFOUND to send's callback, or as 'error' without one",
    async run(create) {
      const s = create('udp4');
      const seen: unknown[] = [];
      s.on('error', (e: Error & { code?: string }) => seen.push(['error event', e.code]));
      s.send('x', 1234, 'name.invalid', (e) =>
        seen.push(['callback', (e as Error & { code?: string })?.code]),
      );
      s.send('x', 1234, 'name.invalid');
      for (let i = 0; i < 100 && seen.length < 2; i++) await tick(20);
      await closeAll(s);
      return seen.sort();
    },
    expect: [
      ['callback', 'ENOTFOUND'],
      ['error event', 'ENOTFOUND'],
    ],
  },
  {
    name: 'multicast membership: join and leave a group on loopback, leave one not joined, a unicast group',
    async run(create) {
      const s = create({ type: 'udp4', reuseAddr: true });
      await new Promise<void>((r) => s.bind(0, () => r()));
      const out = [
        attempt(() => s.addMembership('239.255.77.1', '127.0.0.1')),
        attempt(() => s.dropMembership('239.255.77.1', '127.0.0.1')),
        attempt(() => s.dropMembership('239.255.77.2', '127.0.0.1')),
        attempt(() => s.addMembership('10.1.2.3')),
        attempt(() => s.addSourceSpecificMembership('127.0.0.1', '232.1.1.1', '127.0.0.1')),
        attempt(() => s.dropSourceSpecificMembership('127.0.0.1', '232.1.1.1', '127.0.0.1')),
      ];
      await closeAll(s);
      return out;
    },
    expect: [
      'ok',
      'ok',
      {
        class: 'Error',
        name: 'Error',
        code: 'EADDRNOTAVAIL',
        message: 'dropMembership EADDRNOTAVAIL',
        errno: -99,
        syscall: 'dropMembership',
      },
      {
        class: 'Error',
        name: 'Error',
        code: 'EINVAL',
        message: 'addMembership EINVAL',
        errno: -22,
        syscall: 'addMembership',
      },
      'ok',
      'ok',
    ],
  },
];

conformance(cases);
