// epoll and eventfd on real descriptors: a UDP socket with a datagram waiting is reported with the id
// and fd it was added with, an eventfd wakes the set, and a descriptor removed is reported no more.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import {
  dupCloexec,
  EPOLL_EVENT_SIZE,
  epollAdd,
  epollCreate,
  epollDel,
  epollEventAt,
  epollWait,
  eventFd,
  eventFdDrain,
  eventFdSignal,
} from '../../src/sys/epoll.js';
import { closeFd } from '../../src/sys/socket.js';
import { endpointOf, udpBind, udpSocket } from '../../src/sys/udp-socket.js';

test('epoll: a readable socket comes back with its id and fd; an eventfd wakes; a removed fd is gone', async () => {
  const ep = epollCreate();
  const ev = eventFd();
  const fd = udpSocket(4);
  assert.ok(ep >= 0 && ev >= 0 && fd >= 0);
  assert.equal(udpBind(fd, '127.0.0.1', 0), 0);
  const port = (endpointOf(fd, false) as { port: number }).port;
  const events = Buffer.alloc(8 * EPOLL_EVENT_SIZE);
  try {
    assert.equal(epollAdd(ep, fd, 0x12345), 0);
    assert.equal(epollAdd(ep, ev, -1), 0);
    assert.equal(epollWait(ep, events, 8, 0), 0, 'nothing ready yet');
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.send('x', port, '127.0.0.1', () => r()));
    s.close();
    assert.equal(epollWait(ep, events, 8, 1000), 1);
    assert.deepEqual(epollEventAt(events, 0), { id: 0x12345, fd });
    eventFdSignal(ev);
    const n = epollWait(ep, events, 8, 1000);
    const ids = Array.from({ length: n }, (_, i) => epollEventAt(events, i).id).sort();
    assert.deepEqual(ids, [-1, 0x12345], 'level-triggered: the socket again, and the eventfd');
    eventFdDrain(ev);
    assert.equal(epollDel(ep, fd), 0);
    assert.equal(epollWait(ep, events, 8, 0), 0, 'removed, and the eventfd drained');
    const d = dupCloexec(fd);
    assert.ok(d > fd || d >= 0);
    closeFd(d);
  } finally {
    for (const x of [fd, ev, ep]) closeFd(x);
  }
});
