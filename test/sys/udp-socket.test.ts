// The descriptor calls of the dgram socket on real sockets: bind, UDP connect and disconnect,
// endpoints, shutdown waking a reader, multicast structs accepted by the kernel, scopes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EADDRNOTAVAIL, EINVAL, ENODEV, ENOTCONN } from '../../src/sys/constants.js';
import { closeFd } from '../../src/sys/socket.js';
import {
  endpointOf,
  membership,
  multicastInterface,
  scopeIndex,
  sourceMembership,
  udpBind,
  udpConnect,
  udpDisconnect,
  udpSocket,
} from '../../src/sys/udp-socket.js';

test('bind, connect, the peer, disconnect (AF_UNSPEC) on an IPv4 and an IPv6 socket', () => {
  for (const [family, host] of [
    [4, '127.0.0.1'],
    [6, '::1'],
  ] as const) {
    const fd = udpSocket(family);
    assert.ok(fd >= 0);
    try {
      assert.equal(udpBind(fd, host, 0), 0);
      const local = endpointOf(fd, false);
      assert.ok(typeof local === 'object' && local.host === host && local.port > 0);
      assert.equal(endpointOf(fd, true), -ENOTCONN);
      assert.equal(udpConnect(fd, host, 9), 0);
      assert.deepEqual(endpointOf(fd, true), { host, port: 9, family });
      assert.equal(udpDisconnect(fd), 0);
      assert.equal(endpointOf(fd, true), -ENOTCONN);
    } finally {
      closeFd(fd);
    }
  }
});

test('multicast: join and leave on loopback (IPv4 ip_mreq, ip_mreq_source; IPv6 ipv6_mreq), bad input', () => {
  const fd = udpSocket(4);
  const fd6 = udpSocket(6);
  try {
    assert.equal(membership(fd, 4, '239.255.1.2', '127.0.0.1', true), 0);
    assert.equal(membership(fd, 4, '239.255.1.2', '127.0.0.1', false), 0);
    assert.equal(membership(fd, 4, '239.255.1.2', '127.0.0.1', false), -EADDRNOTAVAIL);
    assert.equal(membership(fd, 4, 'nonsense', undefined, true), -EINVAL);
    assert.equal(sourceMembership(fd, 4, '127.0.0.1', '232.1.2.3', '127.0.0.1', true), 0);
    assert.equal(sourceMembership(fd, 4, '127.0.0.1', '232.1.2.3', '127.0.0.1', false), 0);
    assert.equal(multicastInterface(fd, 4, '127.0.0.1'), 0);
    assert.equal(membership(fd6, 6, 'ff02::1:3', '::%lo', true), 0);
    assert.equal(membership(fd6, 6, 'ff02::1:3', '::%lo', false), 0);
    assert.equal(multicastInterface(fd6, 6, '::%lo'), 0);
    assert.equal(multicastInterface(fd6, 6, '::%no-such-if0'), -ENODEV);
  } finally {
    closeFd(fd);
    closeFd(fd6);
  }
});

test('scopeIndex: a number, an interface name, none, an unknown name', () => {
  assert.equal(scopeIndex('fe80::1%7'), 7);
  assert.equal(scopeIndex('::%lo'), 1);
  assert.equal(scopeIndex('::1'), 0);
  assert.equal(scopeIndex('::%no-such-if0'), -ENODEV);
});
