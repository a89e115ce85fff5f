import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { test } from 'node:test';
import { EnvironmentError } from '../../src/errors.js';
import { connect, listen, type TcpConnection } from '../../src/tcp/connection.js';
import { encodeFrame, FrameDecoder, FrameError } from '../../src/tcp/frame.js';

for (const host of ['127.0.0.1', '::1']) {
  test(`accepted sockets really read through the adaptive reader (${host})`, {
    timeout: 30_000,
  }, async () => {
    const accepted: TcpConnection[] = [];
    let got = 0;
    const srv = await listen(
      { host, port: 0, reader: { adaptive: { min: 1024, max: 64 * 1024 } } },
      (conn) => {
        accepted.push(conn);
        conn.onData = (chunk) => {
          got += chunk.length;
        };
      },
    );
    assert.ok(srv.port > 0);
    const client = await connect({ host, port: srv.port, reader: 'data', onData: () => {} });
    client.socket.end(Buffer.alloc(8 * 1024 * 1024, 3));
    await client.closed;
    while (accepted.length < 1) await new Promise((r) => setTimeout(r, 5));
    await accepted[0].closed;
    assert.equal(accepted.length, 1);
    const st = accepted[0].stats().reader;
    assert.equal(got, 8 * 1024 * 1024);
    assert.equal(st.bytes, got);
    assert.equal(st.reader, 'adaptive:min=1024,max=65536');
    assert.ok(st.grows > 0, 'the size adapted');
    assert.ok(
      st.readSizeHistogram.every((b) => b.le <= 64 * 1024),
      'no read past max',
    );
    assert.equal(srv.buffers.rcvbuf.autotuning, true, "'auto' leaves the kernel in charge");
    await srv.close();
  });
}

test('the connecting side reads through its reader too, and buffers pinned before the SYN are reported', {
  timeout: 30_000,
}, async () => {
  const srv = await listen({ port: 0, rcvbuf: 65536 }, (conn) => {
    conn.socket.end(Buffer.alloc(1024 * 1024, 9));
  });
  assert.equal(srv.buffers.rcvbuf.autotuning, false);
  assert.equal('effective' in srv.buffers.rcvbuf && srv.buffers.rcvbuf.effective, 131072);
  let got = 0;
  const c = await connect({
    host: '127.0.0.1',
    port: srv.port,
    reader: { fixed: 4096 },
    sndbuf: 32768,
    onData: (chunk) => {
      got += chunk.length;
    },
  });
  assert.equal(c.buffers.sndbuf.autotuning, false);
  await c.closed;
  assert.equal(got, 1024 * 1024);
  assert.equal(c.stats().reader.sizeBytes, 4096);
  await srv.close();
});

test('a port in use is an EnvironmentError (exit code 3) naming the address', {
  timeout: 30_000,
}, async () => {
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as net.AddressInfo).port;
  await assert.rejects(
    listen({ port }, () => {}),
    (e: unknown) => {
      assert.ok(e instanceof EnvironmentError);
      assert.match(e.message, new RegExp(`127.0.0.1:${port}: address already in use`));
      assert.equal(e.code, 'EADDRINUSE'); // the system error's code and call are kept
      assert.equal(e.syscall, 'bind');
      return true;
    },
  );
  busy.close();
});

test('a peer that refuses is an EnvironmentError keeping ECONNREFUSED and the call (exit 3 in the CLI)', async () => {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r)); // nobody listens there now
  await assert.rejects(connect({ host: '127.0.0.1', port }), (e: unknown) => {
    assert.ok(e instanceof EnvironmentError, String(e));
    assert.equal(e.code, 'ECONNREFUSED');
    assert.equal(e.syscall, 'connect');
    assert.match(e.message, new RegExp(`cannot connect to 127.0.0.1:${port}: ECONNREFUSED`));
    return true;
  });
});

/** A framed server: each connection's frames are decoded; the outcome of each connection is recorded. */
async function framedServer() {
  const outcomes: { frames: number; partial: boolean; error?: Error }[] = [];
  const srv = await listen({ port: 0 }, (conn) => {
    const dec = new FrameDecoder(() => true);
    conn.onData = (chunk) => {
      dec.push(chunk);
    };
    conn.closed.then((error) => outcomes.push({ frames: dec.frames, partial: dec.partial, error }));
  });
  return { srv, outcomes };
}

async function rawClient(port: number): Promise<net.Socket> {
  const s = net.connect({ host: '127.0.0.1', port });
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  return s;
}

test('a peer that sends a 4 GiB length prefix is closed with a FrameError; nothing that size is allocated', {
  timeout: 30_000,
}, async () => {
  const { srv, outcomes } = await framedServer();
  const before = process.memoryUsage().arrayBuffers;
  const s = await rawClient(srv.port);
  s.write(encodeFrame(Buffer.from('ok')));
  s.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0]));
  await new Promise((r) => s.once('close', r));
  while (outcomes.length < 1) await new Promise((r) => setTimeout(r, 5));
  assert.equal(outcomes[0].frames, 1);
  assert.ok(outcomes[0].error instanceof FrameError);
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024);
  // the server still serves
  const s2 = await rawClient(srv.port);
  s2.end(encodeFrame(Buffer.from('again')));
  while (outcomes.length < 2) await new Promise((r) => setTimeout(r, 5));
  assert.equal(outcomes[1].frames, 1);
  assert.equal(outcomes[1].error, undefined);
  await srv.close(true);
});

test('a peer that resets mid-frame: the connection closes with ECONNRESET, the partial frame is visible', {
  timeout: 30_000,
}, async () => {
  const { srv, outcomes } = await framedServer();
  const s = await rawClient(srv.port);
  s.write(encodeFrame(Buffer.alloc(10)));
  s.write(encodeFrame(Buffer.alloc(100_000)).subarray(0, 50_000));
  await new Promise((r) => setTimeout(r, 50));
  s.resetAndDestroy();
  while (outcomes.length < 1) await new Promise((r) => setTimeout(r, 5));
  assert.equal(outcomes[0].frames, 1);
  assert.equal(outcomes[0].partial, true);
  assert.equal((outcomes[0].error as NodeJS.ErrnoException | undefined)?.code, 'ECONNRESET');
  assert.equal(srv.connections.size, 0);
  await srv.close();
});

const MB = 1_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const reader of ['adaptive', 'data'] as const) {
  test(`an accepted connection reads nothing before its consumer: a consumer attached 300 ms late gets every byte (${reader})`, {
    timeout: 30_000,
  }, async () => {
    let conn: TcpConnection | undefined;
    const srv = await listen({ port: 0, reader }, (c) => {
      conn = c;
    });
    const sent = Buffer.alloc(MB);
    for (let i = 0; i < MB; i++) sent[i] = (i * 7) & 0xff;
    const client = await rawClient(srv.port);
    client.end(sent);
    await sleep(300); // e.g. an auth check before the application reads
    assert.ok(conn, 'accepted');
    assert.equal(conn.reader.bytes, 0, 'nothing read from the kernel before the consumer');
    const got: Buffer[] = [];
    conn.onData = (chunk) => {
      got.push(Buffer.from(chunk));
    };
    assert.equal(await conn.closed, undefined);
    assert.equal(Buffer.concat(got).length, MB);
    assert.ok(Buffer.concat(got).equals(sent), 'the same bytes, in order');
    client.destroy();
    await srv.close();
  });
}

test('a connecting side without onData reads nothing until it is set, then gets every byte', {
  timeout: 30_000,
}, async () => {
  const server = net.createServer((s) => s.end(Buffer.alloc(MB, 5)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const c = await connect({ host: '127.0.0.1', port });
  await sleep(300);
  assert.equal(c.reader.bytes, 0, 'nothing read from the kernel before the consumer');
  let got = 0;
  c.onData = (chunk) => {
    got += chunk.length;
  };
  assert.equal(await c.closed, undefined);
  assert.equal(got, MB);
  server.close();
});

test("connect({ host: 'localhost' }) reaches a listener on 127.0.0.1 or on ::1; listen({ host: 'localhost' }) binds an address", {
  timeout: 30_000,
}, async () => {
  const local = await listen({ host: 'localhost', port: 0 }, (c) => c.socket.destroy());
  assert.ok(net.isIP(local.host), `an address, not the name: ${local.host}`);
  await local.close();
  const localhost = (await lookup('localhost', { all: true })).map((a) => a.address);
  // a listener on whichever address localhost names is reached; on the other, the connect is refused
  for (const host of ['127.0.0.1', '::1']) {
    let accepted = 0;
    const srv = await listen({ host, port: 0 }, (c) => {
      accepted++;
      c.socket.destroy();
    });
    const client = await connect({ host: 'localhost', port: srv.port, onData: () => {} }).catch((e) => e);
    if (localhost.includes(host)) {
      assert.ok(!(client instanceof Error), `connected to ${host}: ${client}`);
      while (accepted === 0) await new Promise((r) => setTimeout(r, 5));
      client.socket.destroy();
    } else assert.equal((client as { code?: string }).code, 'ECONNREFUSED', `localhost is not ${host} here`);
    await srv.close(true);
  }
});

for (const reader of ['adaptive', 'data'] as const) {
  // Corked, the bytes stay in the process (as when the kernel's send buffer is full), so write()'s
  // answer is the mark's: an uncorked write the kernel takes at once returns true whatever the mark.
  test(`writableHighWaterMark on both ends: an 8 KiB write held in the process returns false over a 4 KiB mark, true under Node's 16 KiB (${reader})`, {
    timeout: 30_000,
  }, async () => {
    const answers: boolean[] = [];
    const srv = await listen({ port: 0, reader, writableHighWaterMark: 4096 }, (c) => {
      assert.equal(c.socket.writableHighWaterMark, 4096);
      c.socket.cork();
      answers.push(c.socket.write(Buffer.alloc(8192, 1)));
      c.socket.uncork();
      c.socket.end();
      c.onData = () => {};
    });
    let got = 0;
    const marked = await connect({
      host: '127.0.0.1',
      port: srv.port,
      reader,
      writableHighWaterMark: 4096,
      onData: (chunk) => {
        got += chunk.length;
      },
    });
    assert.equal(marked.socket.writableHighWaterMark, 4096);
    marked.socket.cork();
    assert.equal(marked.socket.write(Buffer.alloc(8192, 2)), false, 'over the mark: wait for drain');
    marked.socket.uncork();
    marked.socket.end();
    await marked.closed;
    const plain = await connect({ host: '127.0.0.1', port: srv.port, reader, onData: () => {} });
    plain.socket.cork();
    assert.equal(plain.socket.write(Buffer.alloc(8192, 2)), true, "under Node's default mark");
    plain.socket.uncork();
    plain.socket.end();
    await plain.closed;
    assert.deepEqual(answers, [false, false]);
    assert.equal(got, 8192, 'every byte still arrives');
    await srv.close();
  });
}
