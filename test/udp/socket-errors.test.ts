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

/** What a callback was called with: how many arguments, and each (errors described). */
const argsOf = (args: unknown[]) => [args.length, ...args.map((a) => (a instanceof Error ? describe(a) : a))];

/** Issue 35's corners: each where sockbuf/dgram once differed from node:dgram. */
const corners: Case[] = [
  {
    name: 'createSocket checks recvBufferSize and sendBufferSize (ERR_OUT_OF_RANGE, ERR_INVALID_ARG_TYPE), and bind throws nothing after',
    async run(create) {
      const opts = (o: object) => ({ type: 'udp4', ...o }) as Parameters<typeof create>[0];
      const out: unknown[] = [
        attempt(() => create(opts({ recvBufferSize: -1 }))),
        attempt(() => create(opts({ recvBufferSize: 'x' }))),
        attempt(() => create(opts({ recvBufferSize: 1.5 }))),
        attempt(() => create(opts({ recvBufferSize: 2 ** 33 }))),
        attempt(() => create(opts({ sendBufferSize: -1 }))),
      ];
      // 0 is "not given", as in node:dgram: the socket binds and works
      const s = create(opts({ recvBufferSize: 0 }));
      s.bind(0, '127.0.0.1');
      await next(s, 'listening');
      out.push(attempt(() => s.address().family));
      await new Promise<void>((r) => s.close(() => r()));
      return out;
    },
    expect: [
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_OUT_OF_RANGE',
        message:
          'The value of "options.recvBufferSize" is out of range. It must be >= 0 && <= 4294967295. Received -1',
      },
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: `The "options.recvBufferSize" property must be of type number. Received type string ('x')`,
      },
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_OUT_OF_RANGE',
        message: 'The value of "options.recvBufferSize" is out of range. It must be an integer. Received 1.5',
      },
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_OUT_OF_RANGE',
        message:
          'The value of "options.recvBufferSize" is out of range. It must be >= 0 && <= 4294967295. Received 8_589_934_592',
      },
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_OUT_OF_RANGE',
        message:
          'The value of "options.sendBufferSize" is out of range. It must be >= 0 && <= 4294967295. Received -1',
      },
      'IPv4',
    ],
  },
  {
    name: "an ICMP error on a connected socket with no 'message' listener: 'error' (recvmsg ECONNREFUSED)",
    async run(create) {
      const p = await peer();
      const port = p.address().port;
      await new Promise<void>((r) => p.close(() => r()));
      const s = create('udp4');
      const out: unknown[] = [];
      await new Promise<void>((r) => s.connect(port, '127.0.0.1', () => r()));
      const err = next(s, 'error', 3000);
      s.send('x', (...a: unknown[]) => out.push(argsOf(a)));
      out.push(describe((await err)[0]));
      await new Promise<void>((r) => s.close(() => r()));
      return out;
    },
    expect: [
      [2, null, 1],
      {
        class: 'Error',
        name: 'Error',
        code: 'ECONNREFUSED',
        message: 'recvmsg ECONNREFUSED',
        errno: -111,
        syscall: 'recvmsg',
      },
    ],
  },
  {
    name: "bind() coerces the port as node:dgram does ('abc', null, '', true, 1.5, -1, 70000)",
    async run(create) {
      const out: unknown[] = [];
      for (const port of ['abc', null, '', true, 1.5, -1, 70000]) {
        const s = create('udp4');
        s.bind(port as number, '127.0.0.1');
        const [ev, arg] = await Promise.race([
          next(s, 'listening').then(() => ['listening', undefined]),
          next(s, 'error').then((a) => ['error', a[0]]),
        ]);
        if (ev === 'error') out.push((arg as { code: string }).code);
        else {
          const got = s.address().port;
          // port 1 needs root (EACCES otherwise); kernel-chosen ports vary
          out.push(got === 1 || got === 4464 || got === 65535 ? got : 'PORT');
        }
        await new Promise<void>((r) => s.close(() => r()));
      }
      return out.map((x) => (x === 'EACCES' ? 1 : x));
    },
    expect: ['PORT', 'PORT', 'PORT', 1, 1, 65535, 4464],
  },
  {
    name: 'failed callbacks get the error alone (EMSGSIZE, a name that does not resolve, the other family, connect)',
    async run(create) {
      const s = create('udp4');
      const calls: Promise<unknown>[] = [];
      const cb = () => {
        let done!: (v: unknown) => void;
        calls.push(new Promise((r) => (done = r)));
        return (...a: unknown[]) => done(argsOf(a));
      };
      s.send(Buffer.alloc(70000), 9, '127.0.0.1', cb());
      s.send('x', 9, 'name.invalid', cb());
      s.send('x', 9, '::1', cb());
      s.send('x', 9, '127.0.0.1', cb());
      const out = await Promise.all(calls);
      const t = create('udp4');
      const c = await new Promise((r) => t.connect(9, 'name.invalid', (...a: unknown[]) => r(a.length)));
      await new Promise<void>((r) => s.close(() => r()));
      await new Promise<void>((r) => t.close(() => r()));
      // a lookup failure's record names the resolver's errno, which differs between hosts: keep its code
      return [
        ...out.map((x) =>
          Array.isArray(x) && (x[1] as { code?: string })?.code === 'ENOTFOUND' ? [x[0], 'ENOTFOUND'] : x,
        ),
        c,
      ];
    },
    expect: [
      [
        1,
        {
          class: 'Error',
          name: 'Error',
          code: 'EMSGSIZE',
          message: 'send EMSGSIZE 127.0.0.1:9',
          errno: -90,
          syscall: 'send',
          address: '127.0.0.1',
          port: 'PORT',
        },
      ],
      [1, 'ENOTFOUND'],
      [
        1,
        {
          class: 'Error',
          name: 'Error',
          code: 'EINVAL',
          message: 'send EINVAL ::1:9',
          errno: -22,
          syscall: 'send',
          address: '::1',
          port: 'PORT',
        },
      ],
      [2, null, 1],
      1,
    ],
  },
  {
    name: 'address() after a failed bind gives the unbound address; a second bind() may succeed',
    async run(create) {
      const p = await peer();
      const s = create('udp4');
      s.bind(p.address().port, '127.0.0.1');
      await next(s, 'error');
      const out: unknown[] = [attempt(() => s.address())];
      const q = create('udp4');
      q.bind(0, '::1');
      await next(q, 'error');
      out.push(attempt(() => q.address()));
      s.bind(0, '127.0.0.1');
      await next(s, 'listening');
      out.push(s.address().address);
      await closeAll(s, q, p);
      return out.map((x) => (typeof x === 'object' && x && 'port' in x ? { ...x, port: 0 } : x));
    },
    expect: [
      'ok',
      {
        class: 'Error',
        name: 'Error',
        code: 'EBADF',
        message: 'getsockname EBADF',
        errno: -9,
        syscall: 'getsockname',
      },
      '127.0.0.1',
    ],
  },
  {
    name: 'addMembership before bind binds the socket (any address, a port of its own), as libuv does',
    async run(create) {
      const s = create('udp4');
      const out: unknown[] = [attempt(() => s.addMembership('239.255.35.1'))];
      const a = s.address();
      out.push([a.address, a.family, a.port > 0]);
      out.push(attempt(() => s.setTTL(7)));
      await new Promise<void>((r) => s.close(() => r()));
      return out;
    },
    expect: ['ok', ['0.0.0.0', 'IPv4', true], 7],
  },
  {
    name: 'ERR_SOCKET_BUFFER_SIZE is a SystemError as Node makes it (keys, toString, accessors, info)',
    async run(create) {
      const s = create('udp4');
      try {
        s.setRecvBufferSize(4096);
        return 'no error';
      } catch (err) {
        const e = err as Error & Record<string, unknown>;
        const errno = Object.getOwnPropertyDescriptor(e, 'errno');
        return {
          keys: Object.keys(e),
          toString: String(e),
          stack: e.stack?.split('\n')[0],
          name: e.name,
          isError: e instanceof Error,
          errno: e.errno,
          syscall: e.syscall,
          info: e.info,
          accessor: typeof errno?.get,
        };
      } finally {
        s.close();
      }
    },
    expect: {
      keys: ['code', 'info', 'errno', 'syscall'],
      toString:
        'SystemError [ERR_SOCKET_BUFFER_SIZE]: Could not get or set buffer size: uv_recv_buffer_size returned EBADF (bad file descriptor)',
      stack:
        'SystemError [ERR_SOCKET_BUFFER_SIZE]: Could not get or set buffer size: uv_recv_buffer_size returned EBADF (bad file descriptor)',
      name: 'SystemError',
      isError: true,
      errno: -9,
      syscall: 'uv_recv_buffer_size',
      info: { errno: -9, code: 'EBADF', message: 'bad file descriptor', syscall: 'uv_recv_buffer_size' },
      accessor: 'function',
    },
  },
  {
    name: 'each received message has an ArrayBuffer of its own (none shared with another message or a pool)',
    async run(create) {
      const s = create('udp4');
      const got: Buffer[] = [];
      s.on('message', (m: Buffer) => got.push(m));
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      const p = await peer();
      for (let i = 0; i < 8; i++) p.send(`m${i}`, s.address().port, '127.0.0.1');
      for (let t = 0; t < 100 && got.length < 8; t++) await tick(20);
      const buffers = new Set(got.map((m) => m.buffer));
      const out = [
        got.length,
        buffers.size,
        got.every((m) => m.byteOffset === 0 && m.buffer.byteLength === m.length),
      ];
      await closeAll(s, p);
      return out;
    },
    expect: [8, 8, true],
  },
];

conformance(corners);

/** Issue 45's: where node:dgram throws (or calls back) and sockbuf/dgram once did otherwise. */
const issue45: Case[] = [
  {
    name: 'bind(0, 5): ERR_INVALID_ARG_TYPE thrown at once (dns.lookup refuses a number), bound never; a second bind is refused',
    async run(create) {
      const s = create('udp4');
      const events: unknown[] = [];
      s.on('error', (e) => events.push(['error', describe(e)]));
      s.on('listening', () => events.push('listening'));
      const out: unknown[] = [attempt(() => s.bind(0, 5 as unknown as string))];
      out.push(attempt(() => s.bind({ port: 0, address: 7 as unknown as string })));
      await tick(100);
      out.push(events);
      await new Promise<void>((r) => s.close(() => r()));
      return out;
    },
    expect: [
      {
        class: 'TypeError',
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: 'The "hostname" argument must be of type string. Received type number (5)',
      },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_ALREADY_BOUND', message: 'Socket is already bound' },
      [],
    ],
  },
  {
    name: 'createSocket({ signal: {} }) and ({ signal: null }): ERR_INVALID_ARG_TYPE for options.signal',
    async run(create) {
      const opts = (signal: unknown) => ({ type: 'udp4', signal }) as Parameters<typeof create>[0];
      return [
        attempt(() => create(opts({}))),
        attempt(() => create(opts(null))),
        attempt(() => create(opts(1))),
      ];
    },
    expect: ['an instance of Object', 'null', 'type number (1)'].map((received) => ({
      class: 'TypeError',
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: `The "options.signal" property must be an instance of AbortSignal. Received ${received}`,
    })),
  },
  {
    name: 'udp6: a datagram of 65527 bytes is delivered whole, alone and among others; 65528 is EMSGSIZE',
    async run(create) {
      const s = create('udp6');
      const p = await peer('udp6');
      const got: number[] = [];
      p.on('message', (m: Buffer) => got.push(m.length));
      const port = p.address().port;
      const sent: unknown[] = [];
      const send = (n: number) =>
        new Promise<void>((r) =>
          s.send(Buffer.alloc(n), port, '::1', (e, b) => {
            sent.push(e ? describe(e) : b);
            r();
          }),
        );
      await send(65527);
      await Promise.all([send(100), send(65527), send(65528), send(200)]);
      for (let t = 0; t < 100 && got.length < 4; t++) await tick(20);
      await closeAll(s, p);
      return { sent, got };
    },
    expect: {
      sent: [
        65527,
        100,
        65527,
        {
          class: 'Error',
          name: 'Error',
          code: 'EMSGSIZE',
          message: 'send EMSGSIZE ::1:PORT',
          errno: -90,
          syscall: 'send',
          address: '::1',
          port: 'PORT',
        },
        200,
      ],
      got: [65527, 100, 65527, 200],
    },
  },
  {
    name: "send(…, '0') with the port as a string: EDESTADDRREQ to the callback, with the address or without",
    async run(create) {
      const s = create('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      const out: unknown[] = [];
      const done = (label: string) =>
        new Promise<void>((r) => {
          const cb = (...a: unknown[]) => {
            out.push([label, ...argsOf(a)]);
            r();
          };
          if (label === 'no address') s.send('x', '0' as unknown as number, cb);
          else s.send('x', '00' as unknown as number, '127.0.0.1', cb);
        });
      try {
        out.push(attempt(() => s.send('x', 0, '127.0.0.1')));
        await done('no address');
        await done('address');
      } finally {
        // closed whatever happened: an open socket would keep the test file from ending
        await new Promise<void>((r) => s.close(() => r()));
      }
      return out;
    },
    expect: [
      {
        class: 'RangeError',
        name: 'RangeError',
        code: 'ERR_SOCKET_BAD_PORT',
        message: 'Port should be > 0 and < 65536. Received type number (0).',
      },
      [
        'no address',
        1,
        {
          class: 'Error',
          name: 'Error',
          code: 'EDESTADDRREQ',
          message: 'send EDESTADDRREQ',
          errno: -89,
          syscall: 'send',
          address: undefined,
        },
      ],
      [
        'address',
        1,
        {
          class: 'Error',
          name: 'Error',
          code: 'EDESTADDRREQ',
          message: 'send EDESTADDRREQ 127.0.0.1',
          errno: -89,
          syscall: 'send',
          address: '127.0.0.1',
        },
      ],
    ],
  },
];

conformance(issue45);
