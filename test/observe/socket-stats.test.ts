import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { StatsSampler, socketStats, socketStatsFrom, statsDelta } from '../../src/observe/socket-stats.js';
import { connectPinned, listenPinned } from '../../src/policy/apply.js';
import { decodeTcpInfo } from '../../src/sys/tcpinfo.js';

function info(fields: Record<number, [number, 'u32' | 'u64']>): Buffer {
  const b = Buffer.alloc(280);
  b[0] = 1;
  for (const [off, [v, kind]] of Object.entries(fields)) {
    if (kind === 'u32') b.writeUInt32LE(v, Number(off));
    else b.writeBigUInt64LE(BigInt(v), Number(off));
  }
  return b;
}

test('socketStatsFrom: units in the names, cwnd in bytes, percentages as ss computes them', () => {
  const t = decodeTcpInfo(
    info({
      16: [1000, 'u32'], // snd_mss
      68: [2000, 'u32'], // rtt
      72: [500, 'u32'], // rttvar
      80: [10, 'u32'], // snd_cwnd
      148: [0xffffffff, 'u32'], // min_rtt unset
      168: [1_000_000, 'u64'], // busy
      176: [250_000, 'u64'], // rwnd_limited
      184: [125_000, 'u64'], // sndbuf_limited
    }),
  );
  const s = socketStatsFrom(t, 131072, 16384, { rcvbuf: true, sndbuf: false });
  assert.equal(s.state, 'established');
  assert.equal(s.rttUs, 2000);
  assert.equal(s.rttVarUs, 500);
  assert.equal(s.minRttUs, undefined);
  assert.equal(s.cwndSegments, 10);
  assert.equal(s.cwndBytes, 10_000);
  assert.equal(s.rwndLimitedPct, 25);
  assert.equal(s.sndbufLimitedPct, 12.5);
  assert.equal(s.rcvbufBytes, 131072);
  assert.deepEqual(s.pinned, { rcvbuf: true, sndbuf: false });
  // never busy: no percentage; an old kernel without busy_time: none either
  assert.equal(socketStatsFrom(decodeTcpInfo(info({})), 1, 1).rwndLimitedPct, undefined);
  assert.equal(socketStatsFrom(decodeTcpInfo(info({}).subarray(0, 160)), 1, 1).busyUs, undefined);
});

test('statsDelta: the percentage of the interval, not since the start', () => {
  const base = socketStatsFrom(
    decodeTcpInfo(info({ 120: [1, 'u64'], 168: [1e6, 'u64'], 176: [9e5, 'u64'] })),
    1,
    1,
  );
  const later = socketStatsFrom(
    decodeTcpInfo(info({ 120: [1_000_001, 'u64'], 168: [2e6, 'u64'], 176: [1e6, 'u64'] })),
    1,
    1,
  );
  assert.equal(later.rwndLimitedPct, 50); // since the start
  const d = statsDelta(base, later, 0.5);
  assert.equal(d.rwndLimitedPct, 10); // during the interval: 100 ms of 1 s busy
  assert.equal(d.busyUs, 1e6);
  assert.equal(d.bytesAcked, 1_000_000);
  assert.equal(d.ackedBitsPerSecond, 16e6);
});

for (const host of ['127.0.0.1', '::1']) {
  test(`(d) socketStats on a live connection: sane values, byte counters match (${host})`, async () => {
    const N = 8 * 1024 * 1024;
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, host, r));
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const { socket: client } = await connectPinned({
      host,
      port: (server.address() as net.AddressInfo).port,
    });
    const peer = await accepted;
    const received = new Promise<void>((resolve) => {
      let got = 0;
      peer.on('data', (d: Buffer) => {
        got += d.length;
        if (got === N) {
          peer.write('k'); // the reply carries the ACK of everything before it
          resolve();
        }
      });
    });
    const replied = new Promise((r) => client.once('data', r));
    client.write(Buffer.alloc(N, 3));
    await received;
    await replied;
    const s = socketStats(client);
    assert.equal(s.state, 'established');
    assert.ok(s.rttUs > 0, `rtt ${s.rttUs}`);
    assert.ok(s.cwndSegments > 0 && s.cwndBytes === s.cwndSegments * s.sndMssBytes);
    assert.equal(s.bytesAcked, N + 1, 'all data acked, plus the SYN');
    assert.equal(s.bytesReceived, 1);
    assert.equal((s.bytesSent ?? 0) - (s.bytesRetrans ?? 0), N, 'sent counts retransmitted bytes too');
    assert.equal(s.notsentBytes, 0);
    assert.ok((s.busyUs ?? 0) >= (s.rwndLimitedUs ?? 0) + (s.sndbufLimitedUs ?? 0));
    assert.ok(s.rcvbufBytes > 0 && s.sndbufBytes > 0);
    assert.deepEqual(s.pinned, { rcvbuf: false, sndbuf: false });
    assert.ok(s.sndWscale !== undefined && s.rcvWscale !== undefined);
    assert.ok((s.sndWndBytes ?? 1) > 0);
    const p = socketStats(peer);
    assert.equal(p.bytesReceived, N);
    assert.equal(p.pinned, undefined, 'a plain server: not known to sockbuf');
    client.destroy();
    peer.destroy();
    server.close();
  });

  test(`(d) StatsSampler: a stalled receiver shows up as rwnd-limited in its interval (${host})`, async () => {
    const server = net.createServer({ pauseOnConnect: true });
    await listenPinned(server, { host, port: 0 }, { rcvbuf: '16K' });
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const client = net.connect((server.address() as net.AddressInfo).port, host);
    await new Promise((r) => client.once('connect', r));
    const peer = await accepted;
    assert.deepEqual(socketStats(peer).pinned, { rcvbuf: true, sndbuf: false });
    const sampler = new StatsSampler(client);
    const N = 4 * 1024 * 1024;
    client.end(Buffer.alloc(N, 1));
    // the paused receiver's 32 KiB window fills; the sender stalls on it
    while (socketStats(client).notsentBytes === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 60));
    const stalled = sampler.sample();
    assert.ok((stalled.rwndLimitedUs ?? 0) > 0, `rwnd-limited ${stalled.rwndLimitedUs} µs`);
    assert.ok((stalled.rwndLimitedPct ?? 0) > 50, `rwnd-limited ${stalled.rwndLimitedPct}%`);
    let got = 0;
    peer.on('data', (d: Buffer) => {
      got += d.length;
    });
    const ended = new Promise((r) => peer.once('end', r));
    peer.resume();
    await ended;
    assert.equal(got, N);
    const rest = sampler.sample();
    const total = socketStats(client);
    // the intervals add up to the totals: each sample covers only its own interval
    assert.equal((stalled.rwndLimitedUs ?? 0) + (rest.rwndLimitedUs ?? 0), total.rwndLimitedUs);
    assert.equal((stalled.bytesAcked ?? 0) + (rest.bytesAcked ?? 0), (total.bytesAcked ?? 0) - 1);
    client.destroy();
    peer.destroy();
    server.close();
  });
}
