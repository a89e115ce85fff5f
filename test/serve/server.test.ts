// sockbuf serve against a stand-in far end (fixtures/fake-sink.mjs) over real loopback sockets:
// one test at a time, hostile control lines, idle connections, a client killed mid-test, deadlines.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../src/index.js';
import { ServeClient, ServeRefused } from '../../src/serve/client.js';
import { MAX_LINE_BYTES } from '../../src/serve/protocol.js';
import { type ServeOptions, startServer } from '../../src/serve/server.js';

const FAKE = fileURLToPath(new URL('./fixtures/fake-sink.mjs', import.meta.url));

function serve(o: Partial<ServeOptions> = {}) {
  return startServer({
    listen: { host: '127.0.0.1', port: 0 },
    maxDurationSeconds: 10,
    maxBytes: 1 << 30,
    idleSeconds: 5,
    farEnd: (args) => ({ file: process.execPath, args: [FAKE, ...args] }),
    ...o,
  });
}

/** Waits (bounded: 5 s) until `cond` holds; fails naming it otherwise. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), `still not true after 5 s: ${cond.toString()}`);
}

/** Sends bytes to the far end and closes. */
function blast(port: number, bytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.end(Buffer.alloc(bytes, 1)));
    s.on('error', reject);
    s.on('close', () => resolve());
  });
}

/** Raw lines exchanged on a bare control connection. */
async function rawConnection(port: number, localAddress?: string) {
  const s = net.connect({ host: '127.0.0.1', port, localAddress });
  await new Promise((r) => s.once('connect', r));
  let buf = '';
  const waiting: ((l: string) => void)[] = [];
  const lines: string[] = [];
  s.setEncoding('utf8');
  s.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    while (lines.length && waiting.length) waiting.shift()?.(lines.shift() as string);
  });
  const closed = new Promise<void>((r) => s.on('close', () => r()));
  s.on('error', () => {});
  return {
    socket: s,
    closed,
    send: (line: string) => s.write(`${line}\n`),
    next: () =>
      new Promise<Record<string, unknown>>((r) => {
        const got = lines.shift();
        if (got !== undefined) r(JSON.parse(got));
        else waiting.push((l) => r(JSON.parse(l)));
      }),
  };
}

test('a test end to end: hello, ready with a port, the far end drains, results come back; then a ping', async () => {
  const srv = await serve();
  try {
    const c = await ServeClient.connect(srv.address);
    const hello = await c.hello();
    assert.equal(hello.maxDurationSeconds, 10);
    assert.equal(hello.tokenRequired, false);
    const ready = await c.startTest('tcp', { reader: 'adaptive', duration: '2s' });
    await blast(ready.port, 100_000);
    const result = await c.result();
    assert.equal(result.exitCode, 0);
    const last = result.lines.at(-1) as { event: string; bytes: number; argv: string[] };
    assert.deepEqual([last.event, last.bytes], ['result', 100_000]);
    assert.deepEqual(last.argv.slice(0, 5), ['sink', 'tcp', '--once', '--reader', 'adaptive']);
    assert.ok(last.argv.includes('--json'));
    // the same connection can run the next test
    const again = await c.startTest('tcp', {});
    await blast(again.port, 10);
    assert.equal(((await c.result()).lines.at(-1) as { bytes: number }).bytes, 10);
    // a ping test: its far end is sink tcp --echo, with ping's own far-end options only
    const ping = await c.startTest('ping', { sndbuf: '64K', size: '16MiB', inflight: 16 });
    await blast(ping.port, 3);
    const echo = (await c.result()).lines.at(-1) as { argv: string[] };
    assert.deepEqual(echo.argv.slice(0, 6), ['sink', 'tcp', '--echo', '--once', '--sndbuf', '65536']);
    c.close();
  } finally {
    await srv.close();
  }
});

test('one test at a time: a second client is told busy, try again; then it gets its turn', async () => {
  const srv = await serve();
  try {
    const a = await ServeClient.connect(srv.address);
    const b = await ServeClient.connect(srv.address);
    const ready = await a.startTest('tcp', {});
    await assert.rejects(
      b.startTest('tcp', {}),
      (e: unknown) => e instanceof ServeRefused && e.reason === 'busy' && /busy, try again/.test(e.message),
    );
    await blast(ready.port, 1000);
    await a.result();
    const ready2 = await b.startTest('tcp', {});
    await blast(ready2.port, 5);
    assert.equal(((await b.result()).lines.at(-1) as { bytes: number }).bytes, 5);
    a.close();
    b.close();
  } finally {
    await srv.close();
  }
});

test('hostile control lines are refused with a message and the server keeps serving', async () => {
  const srv = await serve({ token: 'sesame' });
  try {
    const c = await rawConnection(srv.address.port);
    const cases: [string, string, RegExp][] = [
      ['this is not json', 'bad-json', /not JSON/],
      ['{"v":99,"type":"hello"}', 'version', /unknown protocol version 99/],
      ['{"v":1,"type":"test","kind":"tcp","token":"nope","params":{}}', 'unauthorized', /token/],
      [
        '{"v":1,"type":"test","kind":"tcp","token":"sesame","params":{"duration":1e9}}',
        'refused',
        /duration.*longer than this server allows/,
      ],
      ['{"v":1,"type":"test","kind":"udp","token":"sesame","params":{"rate":-1}}', 'refused', /rate: -1/],
      [
        '{"v":1,"type":"test","kind":"tcp","token":"sesame","params":{"size":"10GiB"}}',
        'refused',
        /size: '10GiB' is more than/,
      ],
      ['{"v":1,"type":"test","kind":"rm -rf","token":"sesame"}', 'refused', /unknown test kind/],
      ['{"v":1,"type":"done"}', 'bad-request', /no test is running/],
      [
        '{"v":1,"type":"test","kind":"ping","token":"sesame","params":{"size":"1GiB"}}',
        'refused',
        /size: '1GiB' is more than this server allows \(16777216 bytes\)/,
      ],
    ];
    for (const [line, code, message] of cases) {
      c.send(line);
      const r = await c.next();
      assert.equal(r.type, 'error', line);
      assert.equal(r.code, code, line);
      assert.match(String(r.message), message);
    }
    // still the same connection, still serving
    c.send('{"v":1,"type":"hello"}');
    assert.equal((await c.next()).type, 'hello');
    // a line over the cap: refused, then the connection is closed (it cannot be resynchronised)
    c.socket.write('x'.repeat(MAX_LINE_BYTES + 10));
    const r = await c.next();
    assert.equal(r.code, 'too-long');
    await c.closed;
    // and others are served
    const d = await ServeClient.connect(srv.address);
    const ready = await d.startTest('tcp', {}, 'sesame');
    await blast(ready.port, 1);
    assert.equal((await d.result()).exitCode, 0);
    d.close();
  } finally {
    await srv.close();
  }
});

test('200 connections that say nothing are closed after the idle timeout; the server keeps serving', async () => {
  const srv = await serve({ idleSeconds: 0.5, maxPerClient: 1000 });
  try {
    const idle = await Promise.all(Array.from({ length: 200 }, () => rawConnection(srv.address.port)));
    // the server accepts them all (client-side connect can precede the server's accept)
    await until(() => srv.connections === 200);
    // bytes that never make a request do not keep a connection open either (slowloris)
    const trickle = await rawConnection(srv.address.port);
    const drip = setInterval(() => trickle.socket.write('{'), 50);
    await Promise.all([...idle, trickle].map((c) => c.closed));
    clearInterval(drip);
    const why = await idle[0].next();
    assert.equal(why.code, 'idle');
    await until(() => srv.connections === 0);
    const c = await ServeClient.connect(srv.address);
    assert.equal((await c.hello()).type, 'hello');
    c.close();
  } finally {
    await srv.close();
  }
});

test('--max-per-client: one address holds at most N connections; the next is told why; others are served', async () => {
  const srv = await serve({ maxPerClient: 8 });
  try {
    const held = await Promise.all(Array.from({ length: 8 }, () => rawConnection(srv.address.port)));
    await until(() => srv.connections === 8);
    const ninth = await rawConnection(srv.address.port);
    const why = await ninth.next();
    assert.equal(why.code, 'busy');
    assert.match(
      String(why.message),
      /too many connections from 127\.0\.0\.1: 8 open \(serve --max-per-client 8\)/,
    );
    await ninth.closed;
    // another address is not held up by this one
    const other = await rawConnection(srv.address.port, '127.0.0.2');
    other.send('{"v":1,"type":"hello"}');
    assert.equal((await other.next()).type, 'hello');
    // a slot freed is a slot to take again
    held[0].socket.destroy();
    await until(() => srv.connections === 8);
    const again = await rawConnection(srv.address.port);
    again.send('{"v":1,"type":"hello"}');
    assert.equal((await again.next()).type, 'hello');
    for (const c of [...held, other, again]) c.socket.destroy();
  } finally {
    await srv.close();
  }
});

test('a hello every 300 ms does not keep a connection: only a test request resets the idle timer', async () => {
  const srv = await serve({ idleSeconds: 1, token: 's3cret' });
  try {
    const c = await rawConnection(srv.address.port);
    const t0 = performance.now();
    const tick = setInterval(() => c.send('{"v":1,"type":"hello"}'), 300);
    // a test request without the token does not count either
    c.send('{"v":1,"type":"test","kind":"tcp","params":{}}');
    const closed = await Promise.race([
      c.closed.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 4000)),
    ]);
    clearInterval(tick);
    assert.ok(closed, 'the connection was closed despite its hellos');
    const seconds = (performance.now() - t0) / 1000;
    assert.ok(seconds < 3, `closed after ${seconds} s`);
    c.socket.destroy();
  } finally {
    await srv.close();
  }
});

test('a client killed mid-test: the far end is killed, its port freed, the next client served', async () => {
  const srv = await serve();
  try {
    // the client is its own process: it asks for a test, prints the port, and waits to be killed
    const script = `
      import { ServeClient } from ${JSON.stringify(new URL('../../src/serve/client.ts', import.meta.url).href)};
      const c = await ServeClient.connect({ host: '127.0.0.1', port: ${srv.address.port} });
      const r = await c.startTest('tcp', { reader: 'hang' });
      console.log(r.port);
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve) =>
      child.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
    );
    assert.ok(port > 0);
    // the far end holds a connection when its client dies
    const held = net.connect({ host: '127.0.0.1', port });
    held.on('error', () => {});
    await new Promise((r) => held.once('connect', r));
    assert.equal(srv.busy, true);
    child.kill('SIGKILL');
    // the far end goes away: the held data connection is closed by the kernel
    await new Promise((r) => held.once('close', r));
    // and the port can be bound again by anyone
    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve());
    });
    await new Promise((r) => probe.close(r));
    // the next client is served (after the server reaped the far end: retry while busy)
    const c = await ServeClient.connect(srv.address);
    let ready: Awaited<ReturnType<ServeClient['startTest']>> | undefined;
    for (let i = 0; i < 50 && !ready; i++) {
      try {
        ready = await c.startTest('tcp', {});
      } catch (e) {
        if (!(e instanceof ServeRefused && e.reason === 'busy')) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.ok(ready, 'served after the killed client');
    await blast(ready.port, 3);
    assert.equal(((await c.result()).lines.at(-1) as { bytes: number }).bytes, 3);
    c.close();
  } finally {
    await srv.close();
  }
});

test('a far end that fails to start is reported with its stderr; one that overruns is stopped', async () => {
  const srv = await serve({ maxDurationSeconds: 1, graceSeconds: 0.2 });
  try {
    const c = await ServeClient.connect(srv.address);
    await assert.rejects(
      c.startTest('tcp', { reader: 'crash' }),
      /could not start: fake-sink: invalid value for --reader: crash/,
    );
    // nobody connects, the far end would wait for ever: stopped at the deadline, results still sent
    await c.startTest('tcp', { reader: 'hang' });
    const r = await c.result();
    assert.match(String(r.stopped), /deadline/);
    assert.equal((r.lines.at(-1) as { event: string }).event, 'result');
    // a far end that counts more bytes than allowed is stopped
    const ready = await c.startTest('tcp', { reader: 'big' });
    const s = net.connect({ host: '127.0.0.1', port: ready.port });
    s.on('error', () => {});
    const big = await c.result();
    assert.match(String(big.stopped), /max-bytes/);
    s.destroy();
    // intervals each below the limit, more than it in all: stopped too
    const many = await c.startTest('tcp', { reader: 'many' });
    const m = net.connect({ host: '127.0.0.1', port: many.port });
    m.on('error', () => {});
    const sum = await c.result();
    assert.match(String(sum.stopped), /max-bytes: the far end counted 1200000000 bytes \(limit 1073741824\)/);
    m.destroy();
    c.close();
  } finally {
    await srv.close();
  }
});

test('a line nested 10 000 deep is refused on its connection; the server keeps serving', async () => {
  const srv = await serve();
  try {
    const c = await rawConnection(srv.address.port);
    const d = 10_000;
    c.send(`{"v":${'['.repeat(d)}${']'.repeat(d)}}`);
    const reply = await c.next();
    assert.equal(reply.type, 'error');
    assert.match(String(reply.message), /nested deeper than/);
    c.socket.destroy();
    const again = await ServeClient.connect(srv.address);
    assert.equal((await again.hello()).tokenRequired, false);
    again.close();
  } finally {
    await srv.close();
  }
});

test('a far end that prints a line nested 100 000 deep: the line is skipped, the result still comes', async () => {
  const srv = await serve();
  try {
    const c = await ServeClient.connect(srv.address);
    const ready = await c.startTest('tcp', { reader: 'deep' });
    await blast(ready.port, 1000);
    const r = await c.result();
    assert.equal(r.exitCode, 0);
    assert.deepEqual(
      r.lines.map((l) => (l as { event: string }).event),
      ['ready', 'result'],
    );
    c.close();
  } finally {
    await srv.close();
  }
});

test('startServer checks its own limits: a UsageError naming each, before it listens', async () => {
  const bad: [Partial<ServeOptions>, string, RegExp][] = [
    [
      { maxDurationSeconds: 0 },
      'maxDurationSeconds',
      /maxDurationSeconds: '0' \(expected a duration more than 0 and at most 24 h\)/,
    ],
    [{ maxDurationSeconds: 86401 }, 'maxDurationSeconds', /'86401'/],
    [{ idleSeconds: 0 }, 'idleSeconds', /idleSeconds: '0'/],
    [{ idleSeconds: Number.NaN }, 'idleSeconds', /idleSeconds: 'NaN'/],
    [{ maxBytes: 0 }, 'maxBytes', /maxBytes: '0' \(expected a size from 1 B to /],
    [{ token: '' }, 'token', /token: '' \(expected a token\)/],
    [{ maxPerClient: 0 }, 'maxPerClient', /maxPerClient: '0' \(expected a whole number from 1 to 4096\)/],
    [{ maxPerClient: 4097 }, 'maxPerClient', /'4097'/],
  ];
  for (const [o, option, message] of bad) {
    await assert.rejects(
      serve(o),
      (err: unknown) => err instanceof UsageError && err.option === option && message.test(err.message),
      JSON.stringify(o),
    );
  }
});
