// sockbuf/dgram against node:dgram, case by case (dgram-conformance.ts): bind to port 0, echo, connect,
// close twice, IPv6, a datagram of 65507 bytes, send callbacks, the overloads of send, sends queued
// before bind, options. The errors have their own file (socket-errors.test.ts), the process life
// cycle too (socket-lifecycle.test.ts).
import { createHash } from 'node:crypto';
import { udpBind, udpSocket } from '../../src/sys/udp-socket.js';
import { addr, attempt, type Case, conformance, next, peer, tick } from './dgram-conformance.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').slice(0, 16);

const cases: Case[] = [
  {
    name: 'bind to port 0: listening, address(), the bind callback, bind() with no arguments',
    async run(create) {
      const seen: unknown[] = [];
      const a = create('udp4');
      a.on('listening', () => seen.push('listening'));
      await new Promise<void>((r) => a.bind(0, '127.0.0.1', () => r()));
      seen.push(addr(a.address()));
      const b = create({ type: 'udp4' });
      b.bind();
      await next(b, 'listening');
      seen.push(addr(b.address()));
      const c = create('udp4');
      c.bind({ port: 0, address: '127.0.0.1', exclusive: true }, () => seen.push('options callback'));
      await next(c, 'listening');
      seen.push(addr(c.address()));
      for (const s of [a, b, c]) await new Promise<void>((r) => s.close(() => r()));
      return seen;
    },
    expect: [
      'listening',
      { address: '127.0.0.1', family: 'IPv4', port: 'PORT' },
      { address: '0.0.0.0', family: 'IPv4', port: 'PORT' },
      'options callback',
      { address: '127.0.0.1', family: 'IPv4', port: 'PORT' },
    ],
  },
  {
    name: "echo: 'message' with (msg, rinfo), a reply to rinfo, createSocket's listener",
    async run(create) {
      const server = create('udp4', (msg, rinfo) =>
        server.send(Buffer.concat([msg, msg]), rinfo.port, rinfo.address),
      );
      await new Promise<void>((r) => server.bind(0, '127.0.0.1', () => r()));
      const client = create('udp4');
      const got = next(client, 'message');
      client.send('ping', server.address().port, '127.0.0.1');
      const [msg, rinfo] = (await got) as [
        Buffer,
        { address: string; family: string; port: number; size: number },
      ];
      const out = {
        msg: msg.toString(),
        isBuffer: Buffer.isBuffer(msg),
        rinfo: { ...rinfo, port: rinfo.port === server.address().port ? 'server' : 'other' },
        keys: Object.keys(rinfo),
      };
      for (const s of [client, server]) await new Promise<void>((r) => s.close(() => r()));
      return out;
    },
    expect: {
      msg: 'pingping',
      isBuffer: true,
      rinfo: { address: '127.0.0.1', family: 'IPv4', port: 'server', size: 8 },
      keys: ['address', 'family', 'port', 'size'],
    },
  },
  {
    name: 'connect: connect event, remoteAddress, sends without an address, disconnect',
    async run(create) {
      const p = await peer();
      const seen: unknown[] = [];
      const s = create('udp4');
      s.connect(p.address().port, '127.0.0.1', () => seen.push('connect callback'));
      seen.push(attempt(() => s.remoteAddress()));
      await next(s, 'connect');
      seen.push(addr(s.remoteAddress()));
      seen.push(attempt(() => s.connect(p.address().port)));
      seen.push(attempt(() => s.send('x', 0, 1, p.address().port, '127.0.0.1')));
      const got = next(p, 'message');
      s.send('one', (e, n) => seen.push(['send callback', e, n]));
      seen.push(String((await got)[0]));
      s.disconnect();
      seen.push(
        attempt(() => s.remoteAddress()),
        attempt(() => s.disconnect()),
      );
      const got2 = next(p, 'message');
      s.send('two', p.address().port, '127.0.0.1');
      seen.push(String((await got2)[0]));
      for (const x of [s, p]) await new Promise<void>((r) => x.close(() => r()));
      return seen;
    },
    expect: [
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_CONNECTED', message: 'Not connected' },
      'connect callback',
      { address: '127.0.0.1', family: 'IPv4', port: 'PORT' },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_IS_CONNECTED', message: 'Already connected' },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_IS_CONNECTED', message: 'Already connected' },
      ['send callback', null, 3],
      'one',
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_CONNECTED', message: 'Not connected' },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_CONNECTED', message: 'Not connected' },
      'two',
    ],
  },
  {
    name: "close twice: the callback and 'close' once, the second close throws, methods after close",
    async run(create) {
      const seen: unknown[] = [];
      const s = create('udp4', () => {});
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      s.on('close', () => seen.push('close event'));
      const closed = new Promise<void>((r) => s.close(() => r()));
      seen.push(attempt(() => s.close()));
      await closed;
      seen.push(
        attempt(() => s.address()),
        attempt(() => s.send('x', 9, '127.0.0.1')),
      );
      seen.push(
        attempt(() => s.ref()),
        attempt(() => s.unref()),
      );
      // bind, then close in the same tick: no 'listening', one 'close'
      const t = create('udp4');
      t.on('listening', () => seen.push('listening after close'));
      t.bind(0);
      await new Promise<void>((r) => t.close(() => r()));
      await tick(20);
      seen.push('second closed');
      return seen;
    },
    expect: [
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_RUNNING', message: 'Not running' },
      'close event',
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_RUNNING', message: 'Not running' },
      { class: 'Error', name: 'Error', code: 'ERR_SOCKET_DGRAM_NOT_RUNNING', message: 'Not running' },
      'ok',
      'ok',
      'second closed',
    ],
  },
  {
    name: 'IPv6: bind ::1, echo, families in address() and rinfo',
    async run(create) {
      const s = create('udp6');
      await new Promise<void>((r) => s.bind(0, '::1', () => r()));
      const p = await peer('udp6');
      const got = next(p, 'message');
      const back = next(s, 'message');
      s.send('six', p.address().port, '::1');
      const [, from] = (await got) as [Buffer, { address: string; port: number }];
      p.send('back', from.port, from.address);
      const [msg, rinfo] = (await back) as [Buffer, { address: string; family: string; size: number }];
      const out = [addr(s.address()), String(msg), rinfo.address, rinfo.family, rinfo.size];
      for (const x of [s, p]) await new Promise<void>((r) => x.close(() => r()));
      return out;
    },
    expect: [{ address: '::1', family: 'IPv6', port: 'PORT' }, 'back', '::1', 'IPv6', 4],
  },
  {
    name: 'a datagram of 65507 bytes goes and comes back whole',
    async run(create) {
      const s = create('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      const p = await peer();
      p.on('message', (m, r) => p.send(m, r.port, r.address));
      const big = Buffer.alloc(65507);
      for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
      const back = next(s, 'message');
      const sent: unknown[] = [];
      s.send(big, p.address().port, '127.0.0.1', (e, n) => sent.push(e, n));
      const [msg] = (await back) as [Buffer];
      const out = { sent, length: msg.length, same: sha(msg) === sha(big) };
      for (const x of [s, p]) await new Promise<void>((r) => x.close(() => r()));
      return out;
    },
    expect: { sent: [null, 65507], length: 65507, same: true },
  },
  {
    name: 'send callbacks and overloads: buffer, string, list, offset/length, empty, in order',
    async run(create) {
      const p = await peer();
      const port = p.address().port;
      const got: string[] = [];
      p.on('message', (m) => got.push(m.toString('latin1')));
      const s = create('udp4'); // unbound: the first send binds it
      const calls: unknown[] = [];
      const cb = (tag: string) => (e: Error | null, n?: number) => calls.push([tag, e, n]);
      s.send(Buffer.from('buffer'), port, '127.0.0.1', cb('buffer'));
      s.send('string', port, '127.0.0.1', cb('string'));
      s.send([Buffer.from('li'), 'st', new Uint8Array([33])], port, '127.0.0.1', cb('list'));
      s.send('hello world', 6, 5, port, '127.0.0.1', cb('offset'));
      s.send(Buffer.from('abcdef'), 1, 2, port, cb('offset, no address'));
      s.send('', port, '127.0.0.1', cb('empty'));
      s.send([], port, cb('empty list'));
      s.send(new DataView(new Uint8Array([65, 66]).buffer), port);
      s.send('end', port, '127.0.0.1', cb('end'));
      await next(s, 'listening');
      const local = addr(s.address());
      for (let i = 0; i < 50 && got.length < 9; i++) await tick(10);
      for (const x of [s, p]) await new Promise<void>((r) => x.close(() => r()));
      return { local, calls, got };
    },
    expect: {
      local: { address: '0.0.0.0', family: 'IPv4', port: 'PORT' },
      calls: [
        ['buffer', null, 6],
        ['string', null, 6],
        ['list', null, 5],
        ['offset', null, 5],
        ['offset, no address', null, 2],
        ['empty', null, 0],
        ['empty list', null, 0],
        ['end', null, 3],
      ],
      got: ['buffer', 'string', 'list!', 'world', 'bc', '', '', 'AB', 'end'],
    },
  },
  {
    name: "bind({ fd }): a UDP socket made elsewhere is adopted, 'listening' at once, and it echoes",
    async run(create) {
      const fd = udpSocket(4);
      udpBind(fd, '127.0.0.1', 0);
      const seen: unknown[] = [];
      const s = create('udp4', (m, r) => s.send(m, r.port, r.address));
      s.on('listening', () => seen.push('listening'));
      s.bind({ fd });
      seen.push('after bind', addr(s.address()));
      const p = await peer();
      const back = next(p, 'message');
      p.send('fd', s.address().port, '127.0.0.1');
      seen.push(String((await back)[0]));
      for (const x of [s, p]) await new Promise<void>((r) => x.close(() => r()));
      return seen;
    },
    expect: ['listening', 'after bind', { address: '127.0.0.1', family: 'IPv4', port: 'PORT' }, 'fd'],
  },
  {
    name: 'options: buffer sizes, broadcast, TTL, multicast TTL and loopback, reuseAddr',
    async run(create) {
      const s = create({ type: 'udp4', reuseAddr: true, recvBufferSize: 100000 });
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      const t = create({ type: 'udp4', reuseAddr: true });
      await new Promise<void>((r) => t.bind(s.address().port, '127.0.0.1', () => r()));
      const out = [
        s.getRecvBufferSize(),
        attempt(() => s.setSendBufferSize(300000)),
        s.getSendBufferSize(),
        attempt(() => s.setBroadcast(true)),
        attempt(() => s.setTTL(64)),
        attempt(() => s.setTTL(0)),
        attempt(() => s.setMulticastTTL(3)),
        attempt(() => s.setMulticastLoopback(false)),
        attempt(() => s.setMulticastInterface('127.0.0.1')),
        attempt(() => s.getSendQueueCount()),
        t.address().port === s.address().port,
      ];
      for (const x of [s, t]) await new Promise<void>((r) => x.close(() => r()));
      return out;
    },
    expect: [
      200000,
      'ok',
      600000,
      'ok',
      64,
      {
        class: 'Error',
        name: 'Error',
        code: 'EINVAL',
        message: 'setTTL EINVAL',
        errno: -22,
        syscall: 'setTTL',
      },
      3,
      false,
      'ok',
      0,
      true,
    ],
  },
];

conformance(cases);
