import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SO_RCVBUF, SOCK_DGRAM, SOL_SOCKET } from '../../src/sys/constants.js';
import { fn } from '../../src/sys/libc.js';
import { decodeMemInfo, getMemInfo, receiveQueue } from '../../src/sys/meminfo.js';
import { encodeSockaddr } from '../../src/sys/sockaddr.js';
import {
  bindFd,
  closeFd,
  createSocket,
  getIntOption,
  localEndpoint,
  setIntOption,
} from '../../src/sys/socket.js';

test('decodeMemInfo: skmem order, short reply leaves the tail undefined', () => {
  const b = Buffer.alloc(36);
  for (let i = 0; i < 9; i++) b.writeUInt32LE(100 + i, i * 4);
  assert.deepEqual(decodeMemInfo(b), {
    rmemAlloc: 100,
    rcvbuf: 101,
    wmemAlloc: 102,
    sndbuf: 103,
    fwdAlloc: 104,
    wmemQueued: 105,
    optmem: 106,
    backlog: 107,
    drops: 108,
  });
  const short = decodeMemInfo(b.subarray(0, 28));
  assert.equal(short.optmem, 106);
  assert.equal(short.drops, undefined);
  assert.throws(() => decodeMemInfo(b.subarray(0, 20)), RangeError);
});

for (const host of ['127.0.0.1', '::1']) {
  test(`SO_MEMINFO on a UDP socket: queued bytes, rcvbuf and drops when it overflows (${host})`, () => {
    const fd = createSocket(host, SOCK_DGRAM);
    try {
      setIntOption(fd, SOL_SOCKET, SO_RCVBUF, 4096);
      bindFd(fd, { host, port: 0 });
      const to = encodeSockaddr({ host, port: localEndpoint(fd)?.port ?? 0 });
      const before = getMemInfo(fd);
      assert.equal(before.rcvbuf, getIntOption(fd, SOL_SOCKET, SO_RCVBUF));
      assert.equal(before.rmemAlloc, 0);
      assert.equal(before.drops, 0);
      const payload = Buffer.alloc(1000);
      for (let i = 0; i < 50; i++) fn('sendto')(fd, payload, payload.length, 0, to, to.length);
      const after = getMemInfo(fd);
      assert.ok(after.rmemAlloc > 0, 'datagrams queued');
      assert.ok((after.drops ?? 0) > 0, `an 8 KiB buffer cannot hold 50 KB: drops=${after.drops}`);
      // the allocation-free reader sees the same queue
      const q = receiveQueue(fd);
      assert.deepEqual({ ...q }, { rmemAlloc: after.rmemAlloc, rcvbuf: after.rcvbuf, drops: after.drops });
    } finally {
      closeFd(fd);
    }
    assert.equal(receiveQueue(fd), undefined, 'a closed descriptor has no queue');
  });
}
