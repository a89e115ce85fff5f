import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { fdOf } from '../../src/sys/socket.js';
import { decodeTcpInfo, getTcpInfo, TCPI_OPT } from '../../src/sys/tcpinfo.js';

/** A 280-byte struct as kernel 6.18 returns it, with distinct values at known offsets. */
function fullStruct(): Buffer {
  const b = Buffer.alloc(280);
  b[0] = 1; // established
  b[1] = 4; // ca_state Loss
  b[5] = TCPI_OPT.SACK | TCPI_OPT.WSCALE | TCPI_OPT.TIMESTAMPS;
  b[6] = 0xa3; // snd_wscale 3 (low nibble), rcv_wscale 10 (high nibble)
  b[7] = 0x05; // delivery_rate_app_limited 1, fastopen_client_fail 2
  b.writeUInt32LE(204000, 8); // rto
  b.writeUInt32LE(32768, 16); // snd_mss
  b.writeUInt32LE(1234, 68); // rtt
  b.writeUInt32LE(617, 72); // rttvar
  b.writeUInt32LE(0xffffffff >>> 1, 76); // snd_ssthresh
  b.writeUInt32LE(10, 80); // snd_cwnd
  b.writeUInt32LE(7, 100); // total_retrans
  b.writeBigUInt64LE(0xffffffffffffffffn, 104); // pacing_rate ~0
  b.writeBigUInt64LE(5_000_000_000n, 120); // bytes_acked (> 2^32)
  b.writeBigUInt64LE(42n, 128); // bytes_received
  b.writeUInt32LE(99, 144); // notsent_bytes
  b.writeUInt32LE(55, 148); // min_rtt
  b.writeBigUInt64LE(123456789n, 160); // delivery_rate
  b.writeBigUInt64LE(1_000_000n, 168); // busy_time
  b.writeBigUInt64LE(250_000n, 176); // rwnd_limited
  b.writeBigUInt64LE(125_000n, 184); // sndbuf_limited
  b.writeUInt32LE(65536, 228); // snd_wnd
  b.writeUInt32LE(131072, 232); // rcv_wnd
  b.writeUInt16LE(3, 240); // total_rto
  b.writeUInt16LE(2, 242); // total_rto_recoveries
  b.writeUInt32LE(900, 244); // total_rto_time
  return b;
}

test('decodeTcpInfo reads every field at its offset', () => {
  const t = decodeTcpInfo(fullStruct());
  assert.equal(t.length, 280);
  assert.equal(t.state, 1);
  assert.equal(t.stateName, 'established');
  assert.equal(t.caState, 4);
  assert.equal(t.rto, 204000);
  assert.equal(t.sndMss, 32768);
  assert.equal(t.rtt, 1234);
  assert.equal(t.rttvar, 617);
  assert.equal(t.sndCwnd, 10);
  assert.equal(t.totalRetrans, 7);
  assert.equal(t.pacingRate, 2 ** 64);
  assert.equal(t.bytesAcked, 5_000_000_000);
  assert.equal(t.bytesReceived, 42);
  assert.equal(t.notsentBytes, 99);
  assert.equal(t.minRtt, 55);
  assert.equal(t.deliveryRate, 123456789);
  assert.equal(t.busyTime, 1_000_000);
  assert.equal(t.rwndLimited, 250_000);
  assert.equal(t.sndbufLimited, 125_000);
  assert.equal(t.sndWnd, 65536);
  assert.equal(t.rcvWnd, 131072);
  assert.equal(t.totalRto, 3);
  assert.equal(t.totalRtoRecoveries, 2);
  assert.equal(t.totalRtoTime, 900);
});

test('wscale nibbles: snd is the low nibble, rcv the high one, and only with TCPI_OPT_WSCALE', () => {
  const t = decodeTcpInfo(fullStruct());
  assert.equal(t.sndWscale, 3);
  assert.equal(t.rcvWscale, 10);
  assert.equal(t.deliveryRateAppLimited, true);
  assert.equal(t.fastopenClientFail, 2);
  const b = fullStruct();
  b[5] = TCPI_OPT.SACK; // window scaling not negotiated
  const u = decodeTcpInfo(b);
  assert.equal(u.sndWscale, undefined);
  assert.equal(u.rcvWscale, undefined);
});

test('a shorter struct from an older kernel: the missing fields are undefined, not zero', () => {
  // 104 bytes: the 3.x struct, ending at tcpi_total_retrans
  const old = decodeTcpInfo(fullStruct().subarray(0, 104));
  assert.equal(old.length, 104);
  assert.equal(old.totalRetrans, 7);
  assert.equal(old.rtt, 1234);
  assert.equal(old.pacingRate, undefined);
  assert.equal(old.bytesAcked, undefined);
  assert.equal(old.busyTime, undefined);
  // 192 bytes: 4.10, ends with tcpi_sndbuf_limited; snd_wnd (5.4) and rcv_wnd (6.2) absent
  const k410 = decodeTcpInfo(fullStruct().subarray(0, 192));
  assert.equal(k410.sndbufLimited, 125_000);
  assert.equal(k410.delivered, undefined);
  assert.equal(k410.sndWnd, undefined);
  assert.equal(k410.rcvWnd, undefined);
  // 232 bytes: 5.4 has snd_wnd but not rcv_wnd
  const k54 = decodeTcpInfo(fullStruct().subarray(0, 232));
  assert.equal(k54.sndWnd, 65536);
  assert.equal(k54.rcvWnd, undefined);
  assert.throws(() => decodeTcpInfo(Buffer.alloc(100)), RangeError);
});

for (const host of ['127.0.0.1', '::1']) {
  test(`getTcpInfo on a live loopback connection (${host})`, async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, host, r));
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const c = net.connect((server.address() as net.AddressInfo).port, host);
    await new Promise<void>((r) => c.once('connect', () => r()));
    const s = await accepted;
    const t = getTcpInfo(fdOf(c));
    assert.equal(t.stateName, 'established');
    assert.ok(t.length >= 104);
    assert.ok(t.sndMss > 0 && t.sndCwnd > 0, 'mss and cwnd set');
    assert.ok((t.options & TCPI_OPT.WSCALE) !== 0 && t.rcvWscale !== undefined, 'window scaling on loopback');
    // what one side advertises is what the other applies
    assert.equal(getTcpInfo(fdOf(s)).sndWscale, t.rcvWscale);
    c.destroy();
    s.destroy();
    server.close();
  });
}
