import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { SysError } from '../../src/errors.js';
import { SO_RCVBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import {
  bindFd,
  closeFd,
  connectFd,
  createSocket,
  fdOf,
  getIntOption,
  listenFd,
  listenOnFd,
  localEndpoint,
  rewrapAccepted,
  setIntOption,
  socketFromFd,
} from '../../src/sys/socket.js';

for (const host of ['127.0.0.1', '::1']) {
  test(`a socket made here, pinned, connected and handed to Node (${host})`, async () => {
    const lfd = createSocket(host, SOCK_STREAM);
    setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, 65536);
    bindFd(lfd, { host, port: 0 });
    listenFd(lfd);
    const port = localEndpoint(lfd)?.port ?? 0;
    assert.ok(port > 0);
    const server = net.createServer({ pauseOnConnect: true });
    await listenOnFd(server, lfd);
    const got: Buffer[] = [];
    let reads = 0;
    const shared = Buffer.alloc(4096);
    const done = new Promise<void>((resolve) => {
      server.on('connection', (raw) => {
        // the accepted socket inherits the listener's pinned SO_RCVBUF
        assert.equal(getIntOption(fdOf(raw), SOL_SOCKET, SO_RCVBUF), 131072);
        const s = rewrapAccepted(raw, {
          buffer: () => shared,
          callback: (n, buf) => {
            reads++;
            got.push(Buffer.from(buf.subarray(0, n)));
            return true;
          },
        });
        s.on('end', () => resolve());
        s.resume(); // created paused
      });
    });
    const cfd = createSocket(host, SOCK_STREAM);
    await connectFd(cfd, { host, port });
    const client = socketFromFd(cfd);
    client.end(Buffer.alloc(100_000, 7));
    await done;
    assert.ok(reads > 0, 'onread was used on the accepted socket');
    assert.equal(Buffer.concat(got).length, 100_000);
    client.destroy();
    server.close();
  });
}

test('a refused connect throws SysError ECONNREFUSED', async () => {
  const fd = createSocket('127.0.0.1', SOCK_STREAM);
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await assert.rejects(connectFd(fd, { host: '127.0.0.1', port }), (e: unknown) => {
    assert.ok(e instanceof SysError);
    assert.equal(e.code, 'ECONNREFUSED');
    assert.equal(e.syscall, 'connect');
    return true;
  });
  closeFd(fd);
});

test('bind to a port in use throws EADDRINUSE', async () => {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  const fd = createSocket('127.0.0.1', SOCK_STREAM);
  assert.throws(() => bindFd(fd, { host: '127.0.0.1', port }), /bind failed: EADDRINUSE/);
  closeFd(fd);
  s.close();
});

test('a connect nobody answers gives up at its timeout with ETIMEDOUT, off the event loop', async (t) => {
  // a listener whose backlog is full: the kernel drops further SYNs, so the connect hangs
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  bindFd(lfd, { host: '127.0.0.1', port: 0 });
  listenFd(lfd, 0);
  const port = localEndpoint(lfd)?.port ?? 0;
  const fds: number[] = [];
  try {
    let timedOut: SysError | undefined;
    for (let i = 0; i < 4 && !timedOut; i++) {
      const fd = createSocket('127.0.0.1', SOCK_STREAM);
      fds.push(fd);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      const t0 = performance.now();
      try {
        await connectFd(fd, { host: '127.0.0.1', port }, 0.3);
      } catch (e) {
        assert.ok(e instanceof SysError);
        assert.equal(e.code, 'ETIMEDOUT');
        assert.ok(performance.now() - t0 < 5000);
        assert.ok(ticks > 0, 'the event loop ran while connecting');
        timedOut = e;
      } finally {
        clearInterval(timer);
      }
    }
    if (!timedOut) t.skip('the kernel accepted every connect into the backlog');
  } finally {
    for (const fd of fds) closeFd(fd);
    closeFd(lfd);
  }
});
