import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  type DiagSocket,
  encodeDiagRequest,
  INET_DIAG,
  NLMSG_DONE,
  NLMSG_ERROR,
  parseDiagChunk,
  SOCK_DIAG_BY_FAMILY,
} from '../../src/observe/sockdiag.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../src/sys/constants.js';

// Real answers of a 6.18 kernel, captured from a live dump while these sockets existed:
// a TCP listener on 127.0.0.1 pinned with SO_RCVBUF 16384 and one connection with 100 000 bytes
// unread at the server; an autotuned TCP pair on ::1; a UDP socket (recvBufferSize 4096) sent 200
// datagrams of 1000 bytes and never read.
const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/sockdiag-capture.json', import.meta.url), 'utf8'),
);
const made = fixture.made;
const dumps: { family: number; protocol: number; chunks: Buffer[] }[] = fixture.dumps.map(
  (d: { family: number; protocol: number; chunks: string[] }) => ({
    ...d,
    chunks: d.chunks.map((h) => Buffer.from(h, 'hex')),
  }),
);

function parseDump(i: number): { sockets: DiagSocket[]; done: boolean; problems: string[] } {
  const d = dumps[i];
  const sockets: DiagSocket[] = [];
  const problems: string[] = [];
  let done = false;
  for (const c of d.chunks) {
    const r = parseDiagChunk(c, d.protocol);
    sockets.push(...r.sockets);
    problems.push(...r.problems);
    done ||= r.done;
  }
  return { sockets, done, problems };
}

test('encodeDiagRequest: nlmsghdr + inet_diag_req_v2 asking for tcp_info and skmem', () => {
  const b = encodeDiagRequest({ family: 6, protocol: IPPROTO_TCP, states: 1 << 1, seq: 7 });
  assert.equal(b.length, 72);
  assert.equal(b.readUInt32LE(0), 72);
  assert.equal(b.readUInt16LE(4), SOCK_DIAG_BY_FAMILY);
  assert.equal(b.readUInt16LE(6), 0x301); // NLM_F_REQUEST | NLM_F_DUMP
  assert.equal(b.readUInt32LE(8), 7);
  assert.deepEqual([b[16], b[17], b[18]], [10, 6, (1 << 1) | (1 << 6)]);
  assert.equal(b.readUInt32LE(20), 2);
});

test('captured IPv4 TCP dump: the pinned listener, both ends of its connection, tcp_info and skmem', () => {
  const { sockets, done, problems } = parseDump(0);
  assert.equal(done, true);
  assert.deepEqual(problems, []);
  const listener = sockets.find((s) => s.localPort === made.tcp4ListenPort && s.stateName === 'listen');
  assert.ok(listener, 'listener found');
  assert.equal(listener.localHost, '127.0.0.1');
  assert.equal(listener.skmem?.rcvbuf, 32768); // 16384 doubled
  const server = sockets.find(
    (s) => s.localPort === made.tcp4ListenPort && s.remotePort === made.tcp4ClientPort,
  );
  const client = sockets.find((s) => s.localPort === made.tcp4ClientPort);
  assert.ok(server && client);
  assert.equal(server.stateName, 'established');
  assert.equal(server.remoteHost, '127.0.0.1');
  assert.equal(client.remotePort, made.tcp4ListenPort);
  assert.ok(server.inode > 0 && server.inode !== client.inode);
  assert.notEqual(server.cookie, client.cookie);
  assert.equal(server.skmem?.rcvbuf, 32768, 'the accepted socket inherits the pinned buffer');
  assert.ok((server.skmem?.rmemAlloc ?? 0) > 0, 'unread bytes are queued');
  assert.ok((server.tcpInfo?.bytesReceived ?? 0) > 0);
  assert.equal(server.tcpInfo?.stateName, 'established');
  assert.equal(server.tcpInfo?.rcvWscale, 0, 'a buffer pinned before the handshake offers window scale 0');
  assert.ok((client.tcpInfo?.rcvWscale ?? 0) > 0, 'the autotuned client offers a larger scale');
  assert.equal(client.tcpInfo?.sndWscale, 0);
  assert.equal(typeof client.congestion, 'string');
  assert.ok((client.congestion ?? '').length > 0);
});

test('captured IPv6 TCP dump: addresses, ports and both ends', () => {
  const { sockets, done, problems } = parseDump(1);
  assert.equal(done, true);
  assert.deepEqual(problems, []);
  const client = sockets.find((s) => s.localPort === made.tcp6ClientPort);
  assert.ok(client);
  assert.equal(client.family, 6);
  assert.equal(client.localHost, '::1');
  assert.equal(client.remoteHost, '::1');
  assert.equal(client.remotePort, made.tcp6ListenPort);
  assert.ok((client.tcpInfo?.bytesAcked ?? 0) > 0);
});

test('captured UDP dump: the unread socket with its drops', () => {
  const { sockets, done, problems } = parseDump(2);
  assert.equal(done, true);
  assert.deepEqual(problems, []);
  const u = sockets.find((s) => s.localPort === made.udp4Port);
  assert.ok(u);
  assert.equal(u.protocol, IPPROTO_UDP);
  assert.equal(u.tcpInfo, undefined);
  assert.equal(u.skmem?.rcvbuf, 8192);
  assert.ok((u.skmem?.drops ?? 0) > 0, 'datagrams beyond the buffer were dropped');
  assert.ok((u.skmem?.drops ?? 0) <= 200);
});

const realChunk = dumps[0].chunks[0];

test('a truncated datagram yields the complete messages before the cut and says what was cut', () => {
  const whole = parseDiagChunk(realChunk, IPPROTO_TCP).sockets.length;
  assert.ok(whole >= 3);
  const boundaries = new Set<number>();
  for (let o = 0; o < realChunk.length; o += (realChunk.readUInt32LE(o) + 3) & ~3) boundaries.add(o);
  for (let cut = 0; cut < realChunk.length; cut += 7) {
    const r = parseDiagChunk(realChunk.subarray(0, cut), IPPROTO_TCP);
    assert.ok(r.sockets.length <= whole);
    assert.equal(r.done, false);
    if (!boundaries.has(cut)) assert.ok(r.problems.length > 0, `cut at ${cut}`);
  }
});

function message(type: number, payload: Buffer, claimedLen?: number): Buffer {
  const b = Buffer.alloc(16 + payload.length);
  b.writeUInt32LE(claimedLen ?? b.length, 0);
  b.writeUInt16LE(type, 4);
  payload.copy(b, 16);
  return b;
}

test('lengths that lie are refused, not trusted', () => {
  const huge = message(SOCK_DIAG_BY_FAMILY, Buffer.alloc(72), 0xffffffff);
  const r1 = parseDiagChunk(huge, IPPROTO_TCP);
  assert.equal(r1.sockets.length, 0);
  assert.match(r1.problems[0], /claims 4294967295 bytes/);
  const tiny = message(SOCK_DIAG_BY_FAMILY, Buffer.alloc(72), 3);
  assert.match(parseDiagChunk(tiny, IPPROTO_TCP).problems[0], /claims 3 bytes/);
  // an inet_diag_msg too short for its header
  const short = message(SOCK_DIAG_BY_FAMILY, Buffer.alloc(40));
  assert.match(parseDiagChunk(short, IPPROTO_TCP).problems[0], /inet_diag_msg of 40 bytes/);
  // an rtattr claiming more than is there: the socket survives without it
  const msg = Buffer.alloc(72 + 8);
  msg[0] = 2;
  msg.writeUInt16LE(65535, 72);
  msg.writeUInt16LE(INET_DIAG.INFO, 74);
  const r4 = parseDiagChunk(message(SOCK_DIAG_BY_FAMILY, msg), IPPROTO_TCP);
  assert.equal(r4.sockets.length, 1);
  assert.equal(r4.sockets[0].tcpInfo, undefined);
  assert.match(r4.problems[0], /rtattr type 2 claims 65535/);
  // a tcp_info attribute too short to decode
  const m5 = Buffer.alloc(72 + 12);
  m5[0] = 10;
  m5.writeUInt16LE(12, 72);
  m5.writeUInt16LE(INET_DIAG.INFO, 74);
  const r5 = parseDiagChunk(message(SOCK_DIAG_BY_FAMILY, m5), IPPROTO_TCP);
  assert.equal(r5.sockets[0].family, 6);
  assert.match(r5.problems[0], /tcp_info of 8 bytes/);
  // a family that is not inet
  const m6 = Buffer.alloc(72);
  m6[0] = 1;
  assert.match(parseDiagChunk(message(SOCK_DIAG_BY_FAMILY, m6), IPPROTO_TCP).problems[0], /family 1/);
});

test('NLMSG_ERROR and NLMSG_DONE end the dump, with the errno when there is one', () => {
  const eperm = Buffer.alloc(4);
  eperm.writeInt32LE(-1, 0);
  const e = parseDiagChunk(message(NLMSG_ERROR, eperm), IPPROTO_TCP);
  assert.equal(e.done, true);
  assert.equal(e.error, 1);
  const ack = parseDiagChunk(message(NLMSG_ERROR, Buffer.alloc(4)), IPPROTO_TCP);
  assert.equal(ack.error, undefined);
  assert.equal(parseDiagChunk(message(NLMSG_ERROR, Buffer.alloc(0)), IPPROTO_TCP).error, 5);
  const d = parseDiagChunk(message(NLMSG_DONE, Buffer.alloc(4)), IPPROTO_TCP);
  assert.deepEqual([d.done, d.error], [true, undefined]);
});

test('random and bit-flipped bytes never throw', () => {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  for (let i = 0; i < 3000; i++) {
    let b: Buffer;
    if (i % 2) {
      b = Buffer.alloc(rand() % 400);
      for (let j = 0; j < b.length; j++) b[j] = rand() & 0xff;
    } else {
      b = Buffer.from(realChunk);
      for (let k = 0; k < 8; k++) b[rand() % b.length] = rand() & 0xff;
    }
    const r = parseDiagChunk(b, IPPROTO_TCP);
    assert.ok(Array.isArray(r.sockets));
  }
});

test('the socket cookie in decimal, exact on both sides of 2^53', () => {
  const cookieOf = (hi: number, lo: number) => {
    const msg = Buffer.alloc(72);
    msg[0] = 2;
    msg.writeUInt32LE(lo, 4 + 40);
    msg.writeUInt32LE(hi, 4 + 44);
    return parseDiagChunk(message(SOCK_DIAG_BY_FAMILY, msg), IPPROTO_TCP).sockets[0].cookie;
  };
  assert.equal(cookieOf(0, 4097), '4097');
  assert.equal(cookieOf(1, 5), '4294967301');
  assert.equal(cookieOf(0x1fffff, 0xffffffff), String(2 ** 53 - 1));
  assert.equal(cookieOf(0x200000, 1), '9007199254740993'); // 2^53 + 1: no double holds it
  assert.equal(cookieOf(0xffffffff, 0xffffffff), '18446744073709551615');
});
