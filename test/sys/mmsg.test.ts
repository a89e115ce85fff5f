import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import {
  EAGAIN,
  IPPROTO_UDP,
  MSG_DONTWAIT,
  MSG_TRUNC,
  SO_TIMESTAMPNS,
  SOCK_DGRAM,
  SOL_SOCKET,
  UDP_GRO,
} from '../../src/sys/constants.js';
import {
  CMSG_TIMESPEC_SPACE,
  findIntCmsg,
  MMSGHDR_SIZE,
  MsgVec,
  NAME_SIZE,
  probeUdpOffload,
  ReadableWaiter,
  recvmmsg,
} from '../../src/sys/mmsg.js';
import { decodeSockaddr } from '../../src/sys/sockaddr.js';
import { bindFd, closeFd, createSocket, localEndpoint, setIntOption } from '../../src/sys/socket.js';

async function sendAll(port: number, host: string, payloads: Buffer[]): Promise<number> {
  const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  for (const p of payloads) await new Promise<void>((r, j) => s.send(p, port, host, (e) => (e ? j(e) : r())));
  const me = s.address().port;
  s.close();
  return me;
}

test('findIntCmsg walks cmsghdrs (hand-built buffer)', () => {
  const b = Buffer.alloc(64);
  // first cmsg: SOL_SOCKET/SO_RXQ_OVFL (u32 40), len 20; second: SOL_UDP/UDP_GRO int 1200
  b.writeBigUInt64LE(20n, 0);
  b.writeInt32LE(1, 8);
  b.writeInt32LE(40, 12);
  b.writeUInt32LE(7, 16);
  b.writeBigUInt64LE(20n, 24);
  b.writeInt32LE(IPPROTO_UDP, 32);
  b.writeInt32LE(UDP_GRO, 36);
  b.writeInt32LE(1200, 40);
  assert.equal(findIntCmsg(b, 0, 48, IPPROTO_UDP, UDP_GRO), 1200);
  assert.equal(findIntCmsg(b, 0, 24, IPPROTO_UDP, UDP_GRO), undefined, 'beyond the used length');
  assert.equal(findIntCmsg(b, 0, 48, 1, 40), 7);
});

for (const host of ['127.0.0.1', '::1']) {
  test(`recvmmsg takes several datagrams in one call, with lengths, sources and MSG_TRUNC (${host})`, async () => {
    const fd = createSocket(host, SOCK_DGRAM);
    try {
      bindFd(fd, { host, port: 0 });
      const port = localEndpoint(fd)?.port ?? 0;
      const slot = 256;
      const data = Buffer.alloc(8 * slot);
      const names = Buffer.alloc(8 * NAME_SIZE);
      const vec = new MsgVec({ count: 8, names });
      for (let i = 0; i < 8; i++) vec.setIov(i, data, i * slot, slot);
      assert.equal(vec.hdr.length, 8 * MMSGHDR_SIZE);
      const from = await sendAll(port, host, [Buffer.alloc(10, 1), Buffer.alloc(0), Buffer.alloc(300, 3)]);
      assert.ok(new ReadableWaiter(fd).wait(1e9), 'readable');
      const n = recvmmsg(fd, vec, 0, 8, MSG_DONTWAIT);
      assert.equal(n, 3);
      assert.deepEqual([vec.msgLen(0), vec.msgLen(1), vec.msgLen(2)], [10, 0, slot]);
      assert.equal(vec.msgFlags(0) & MSG_TRUNC, 0);
      assert.equal(vec.msgFlags(2) & MSG_TRUNC, MSG_TRUNC, 'a datagram larger than its slot is flagged');
      assert.ok(data.subarray(0, 10).every((b) => b === 1));
      assert.deepEqual(decodeSockaddr(names, 0), { host, port: from, family: host.includes(':') ? 6 : 4 });
      assert.equal(recvmmsg(fd, vec, 0, 8, MSG_DONTWAIT), -EAGAIN);
      assert.equal(new ReadableWaiter(fd).wait(1e6), false, 'nothing left: the wait times out');
    } finally {
      closeFd(fd);
    }
  });
}

test('this kernel (6.x) offers UDP_SEGMENT and UDP_GRO', () => {
  assert.deepEqual(probeUdpOffload(), { segment: true, gro: true });
});

test('arrivalUs: with SO_TIMESTAMPNS each datagram carries when it reached the queue, not when it was read', async () => {
  const fd = createSocket('127.0.0.1', SOCK_DGRAM);
  try {
    bindFd(fd, { host: '127.0.0.1', port: 0 });
    setIntOption(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
    const port = localEndpoint(fd)?.port ?? 0;
    // The kernel turns stamping on for the host a moment after the first socket asks (a deferred static
    // key): a datagram queued before that has no stamp and is given the time of its read ("race occurred
    // between timestamp enabling and packet receiving", net/socket.c). CI met it (1 run in 8 here: the
    // first datagram stamped 0.2-0.3 ms after the second). So a first datagram, and a pause, go first.
    await sendAll(port, '127.0.0.1', [Buffer.from('warm')]);
    await new Promise((r) => setTimeout(r, 20));
    await sendAll(port, '127.0.0.1', [Buffer.from('old')]);
    await new Promise((r) => setTimeout(r, 60));
    await sendAll(port, '127.0.0.1', [Buffer.from('new')]);
    const data = Buffer.alloc(3 * 64);
    const v = new MsgVec({ count: 3, controlBytes: CMSG_TIMESPEC_SPACE });
    for (let i = 0; i < 3; i++) v.setIov(i, data, i * 64, 64);
    assert.equal(recvmmsg(fd, v, 0, 3, MSG_DONTWAIT), 3);
    const now = Date.now() * 1000;
    const [a0, a1] = [v.arrivalUs(1), v.arrivalUs(2)];
    assert.ok(a1 - a0 >= 50_000 && a1 - a0 < 5_000_000, `60 ms apart: ${a1 - a0} µs`);
    assert.ok(Math.abs(now - a1) < 2_000_000, `on the wall clock: ${now - a1} µs before the read`);
    // a message without the stamp (another vec, no control room) has none
    assert.equal(new MsgVec({ count: 1 }).arrivalUs(0), 0);
  } finally {
    closeFd(fd);
  }
});
