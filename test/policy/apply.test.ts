import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { applyTcpBuffers, applyUdpRcvbuf, connectPinned, listenPinned } from '../../src/policy/apply.js';
import type { PinnedBuffer } from '../../src/policy/buffers.js';
import { SO_RCVBUF, SO_SNDBUF, SOCK_DGRAM, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import { closeFd, createSocket, fdOf, getIntOption } from '../../src/sys/socket.js';
import { readSysctl } from '../../src/sys/sysctl.js';
import { getTcpInfo } from '../../src/sys/tcpinfo.js';
import { writeBulk } from '../lib/bulk.js';

const BULK = 32 * 1024 * 1024; // bounded: ~30 ms on loopback
const rmemMax = readSysctl('net.core.rmem_max')?.[0] ?? 0;
const wmemMax = readSysctl('net.core.wmem_max')?.[0] ?? 0;

/** Writes `bytes` from `from` and resolves when `to` has read them all and seen the end. */
function transfer(from: net.Socket, to: net.Socket, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let got = 0;
    to.on('data', (d: Buffer) => {
      got += d.length;
    });
    to.once('end', () => resolve(got));
    to.once('error', reject);
    writeBulk(from, bytes);
  });
}

async function plainServer(
  host: string,
): Promise<{ server: net.Server; port: number; next: Promise<net.Socket> }> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, host, r));
  const next = new Promise<net.Socket>((r) => server.once('connection', r));
  return { server, port: (server.address() as net.AddressInfo).port, next };
}

for (const host of ['127.0.0.1', '::1']) {
  test(`(a) auto: no setsockopt, and SO_RCVBUF grows during a bulk transfer — autotuning on (${host})`, async () => {
    const { server, port, next } = await plainServer(host);
    const { socket: client, buffers } = await connectPinned({ host, port });
    assert.deepEqual(buffers.rcvbuf, { requested: 'auto', autotuning: true });
    assert.deepEqual(buffers.sndbuf, { requested: 'auto', autotuning: true });
    const peer = await next;
    const initial = getIntOption(fdOf(client), SOL_SOCKET, SO_RCVBUF);
    // the receiver's scale is the big one: the kernel sized it for tcp_rmem[2]
    assert.ok((getTcpInfo(fdOf(client)).rcvWscale ?? 0) >= 7);
    let grown = initial;
    client.on('data', () => {
      grown = Math.max(grown, getIntOption(fdOf(client), SOL_SOCKET, SO_RCVBUF));
    });
    assert.equal(await transfer(peer, client, BULK), BULK);
    assert.ok(grown > initial, `SO_RCVBUF grew from ${initial} (got ${grown})`);
    client.destroy();
    server.close();
  });

  test(`(b) rcvbuf=64K before connect: stays 128K, and the advertised window scale is small (${host})`, async () => {
    const { server, port, next } = await plainServer(host);
    const { socket: client, buffers } = await connectPinned({ host, port }, { rcvbuf: '64K' });
    assert.deepEqual(buffers.rcvbuf, {
      requested: 65536,
      effective: 131072,
      limit: rmemMax,
      clamped: false,
      autotuning: false,
    });
    const peer = await next;
    assert.equal(await transfer(peer, client, BULK), BULK);
    assert.equal(getIntOption(fdOf(client), SOL_SOCKET, SO_RCVBUF), 131072, 'no autotuning');
    const mine = getTcpInfo(fdOf(client)).rcvWscale ?? -1;
    const theirs = getTcpInfo(fdOf(peer));
    assert.ok(mine >= 0 && mine <= 2, `rcv_wscale ${mine} fits a 128K buffer`);
    assert.equal(theirs.sndWscale, mine, 'the peer applies the scale the pinned side advertised');
    assert.ok((theirs.rcvWscale ?? 0) > mine, 'the unpinned side advertises a bigger scale');
    client.destroy();
    server.close();
  });

  test(`(b) rcvbuf=64K on a listener: accepted sockets inherit it and the small scale (${host})`, async () => {
    const server = net.createServer();
    const buffers = await listenPinned(server, { host, port: 0 }, { rcvbuf: 65536 });
    assert.equal((buffers.rcvbuf as PinnedBuffer).effective, 131072);
    const next = new Promise<net.Socket>((r) => server.once('connection', r));
    const client = net.connect((server.address() as net.AddressInfo).port, host);
    const accepted = await next;
    assert.equal(await transfer(client, accepted, BULK), BULK);
    assert.equal(getIntOption(fdOf(accepted), SOL_SOCKET, SO_RCVBUF), 131072);
    const scale = getTcpInfo(fdOf(accepted)).rcvWscale ?? -1;
    assert.ok(scale >= 0 && scale <= 2, `rcv_wscale ${scale}`);
    assert.equal(getTcpInfo(fdOf(client)).sndWscale, scale);
    accepted.destroy();
    client.destroy();
    server.close();
  });

  test(`(c) TCP sizes above rmem_max/wmem_max are reported clamped, with one warning (${host})`, async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const sndbuf = 4 * wmemMax + (host === '::1' ? 1 : 0); // a distinct size per family: its own warning
    try {
      for (let i = 0; i < 2; i++) {
        const fd = createSocket(host, SOCK_STREAM);
        const r = applyTcpBuffers(fd, {
          rcvbuf: 4 * rmemMax,
          sndbuf,
        });
        assert.deepEqual(r.rcvbuf, {
          requested: 4 * rmemMax,
          effective: 2 * rmemMax,
          limit: rmemMax,
          clamped: true,
          autotuning: false,
        });
        assert.equal(getIntOption(fd, SOL_SOCKET, SO_RCVBUF), 2 * rmemMax);
        assert.equal((r.sndbuf as PinnedBuffer).effective, 2 * wmemMax);
        assert.equal(getIntOption(fd, SOL_SOCKET, SO_SNDBUF), 2 * wmemMax);
        closeFd(fd);
      }
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      const mine = warnings.filter((w) => w.includes(`SO_SNDBUF ${sndbuf} `));
      assert.equal(mine.length, 1, 'one warning for two sockets');
      assert.match(mine[0], new RegExp(`net\\.core\\.wmem_max=${sndbuf}$`));
    } finally {
      process.off('warning', onWarning);
    }
  });

  test(`(c) UDP: the target is met below rmem_max×2, forced above it as root (${host})`, (t) => {
    if (process.getuid?.() !== 0) return t.skip('SO_RCVBUFFORCE needs CAP_NET_ADMIN: run as root');
    const fd = createSocket(host, SOCK_DGRAM);
    try {
      const small = applyUdpRcvbuf(fd, 2 * rmemMax);
      assert.equal(small.met, true);
      assert.equal(small.forced, false);
      assert.equal(small.got, 2 * rmemMax);
      const big = applyUdpRcvbuf(fd, 4 * rmemMax);
      assert.equal(big.was, 2 * rmemMax);
      assert.equal(big.forced, true);
      assert.equal(big.got, 4 * rmemMax);
      assert.equal(big.met, true);
    } finally {
      closeFd(fd);
    }
  });

  test(`(c) UDP without CAP_NET_ADMIN: clamped to rmem_max×2, warned once with the sysctl (${host})`, (t) => {
    if (process.getuid?.() !== 0)
      return t.skip('dropping CAP_NET_ADMIN is only a test when we had it: run as root');
    const child = fileURLToPath(new URL('./fixtures/udp-rcvbuf.child.ts', import.meta.url));
    const wanted = 4 * rmemMax;
    const r = spawnSync(
      'setpriv',
      [
        '--inh-caps=-net_admin',
        '--bounding-set=-net_admin',
        '--',
        process.execPath,
        '--import',
        'tsx',
        child,
        String(wanted),
        host,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (r.error) return t.skip(`setpriv not available: ${r.error.message}`);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report, {
      wanted,
      was: report.was,
      got: 2 * rmemMax,
      limit: rmemMax,
      forced: false,
      met: false,
    });
    const lines = r.stderr.split('\n').filter((l) => l.includes('failed to sufficiently increase'));
    assert.equal(lines.length, 1, `warned once: ${r.stderr}`);
    assert.match(lines[0], new RegExp(`wanted: ${wanted / 1024} kiB, got: ${(2 * rmemMax) / 1024} kiB`));
    assert.match(lines[0], new RegExp(`sysctl -w net\\.core\\.rmem_max=${wanted / 2}`));
  });
}
