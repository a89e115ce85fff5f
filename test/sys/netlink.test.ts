import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { SysError } from '../../src/errors.js';
import { AF_INET, IPPROTO_TCP, NETLINK_SOCK_DIAG } from '../../src/sys/constants.js';
import { netlinkDump } from '../../src/sys/netlink.js';

/** nlmsghdr + inet_diag_req_v2 by hand (the encoder under test lives in src/observe/sockdiag.ts). */
function request(protocol: number, family = AF_INET): Buffer {
  const b = Buffer.alloc(72);
  b.writeUInt32LE(72, 0);
  b.writeUInt16LE(20, 4); // SOCK_DIAG_BY_FAMILY
  b.writeUInt16LE(0x301, 6); // REQUEST | DUMP
  b[16] = family;
  b[17] = protocol;
  b.writeUInt32LE(0xfff, 20);
  return b;
}

test('a sock_diag dump arrives as datagrams ending with NLMSG_DONE, our listener among them', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const types: number[] = [];
    let seen = false;
    netlinkDump(NETLINK_SOCK_DIAG, request(IPPROTO_TCP), (chunk) => {
      for (let o = 0; o + 16 <= chunk.length; o += (chunk.readUInt32LE(o) + 3) & ~3) {
        types.push(chunk.readUInt16LE(o + 4));
        if (chunk.readUInt16LE(o + 4) === 20 && chunk.readUInt16BE(o + 16 + 4) === port) seen = true;
        if (chunk.readUInt32LE(o) < 16) break;
      }
      return types.at(-1) === 3;
    });
    assert.equal(types.at(-1), 3, 'NLMSG_DONE last');
    assert.ok(seen, 'the listener is in the dump');
  } finally {
    server.close();
  }
});

test('a silent kernel ends the wait with a SysError instead of hanging', () => {
  // a caller that never sees its end (here: one that ignores NLMSG_DONE) waits on a silent socket;
  // SO_RCVTIMEO ends the wait
  assert.throws(
    () => netlinkDump(NETLINK_SOCK_DIAG, request(IPPROTO_TCP), () => false, { timeoutMs: 100 }),
    (e: unknown) => e instanceof SysError && /no answer within 100 ms/.test(e.message),
  );
});
