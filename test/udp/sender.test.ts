// The application sender against real sockets: node:dgram receivers (no GRO, so the kernel cuts each
// GSO message back into the datagrams it carried) get the caller's bytes unchanged, in order.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../src/errors.js';
import { udpOffload } from '../../src/udp/offload.js';
import { createUdpSender, MAX_DATAGRAM, UdpSendError } from '../../src/udp/sender.js';
import { until } from './helpers.js';

interface Peer {
  port: number;
  got: Buffer[];
  close: () => void;
}

async function peer(host: string): Promise<Peer> {
  const s = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', recvBufferSize: 8 << 20 });
  const got: Buffer[] = [];
  s.on('message', (m) => got.push(m));
  await new Promise<void>((r) => s.bind(0, host, () => r()));
  return { port: s.address().port, got, close: () => s.close() };
}

/** `n` datagrams of `size` random bytes, then one of `last` bytes (a short last segment). */
const run = (n: number, size: number, last?: number) => [
  ...Array.from({ length: n }, () => randomBytes(size)),
  ...(last === undefined ? [] : [randomBytes(last)]),
];

const gso = udpOffload().segment;

for (const host of ['127.0.0.1', '::1']) {
  test(`${host}: plain sendmmsg delivers the caller's bytes unchanged, every size from 0 to ${MAX_DATAGRAM}`, async () => {
    const p = await peer(host);
    const s = await createUdpSender({ to: { host, port: p.port }, gso: false, batch: 8 });
    try {
      const sent = [
        Buffer.alloc(0),
        randomBytes(1),
        ...run(40, 64),
        randomBytes(1400),
        randomBytes(MAX_DATAGRAM),
      ];
      assert.equal(await s.sendBatch(sent), sent.length);
      assert.ok(await until(() => p.got.length >= sent.length), `${p.got.length} of ${sent.length}`);
      assert.deepEqual(p.got, sent);
      const st = s.stats();
      assert.equal(st.datagrams, sent.length);
      assert.equal(st.gsoMessages, 0);
      assert.ok(st.calls >= Math.ceil(sent.length / 8), 'at most 8 messages per call');
    } finally {
      s.close();
      p.close();
    }
  });

  test(`${host}: GSO runs (equal sizes, a short last segment) deliver the caller's bytes unchanged`, {
    skip: !gso && 'this kernel refuses UDP_SEGMENT',
  }, async () => {
    const p = await peer(host);
    const s = await createUdpSender({ to: { host, port: p.port }, gso: true });
    try {
      // 64-datagram runs, a run cut by a shorter datagram, a size change, a large-segment run
      const sent = [...run(150, 100, 37), ...run(10, 1200, 1), ...run(3, 20_000, 5000)];
      assert.equal(await s.sendBatch(sent), sent.length);
      assert.ok(await until(() => p.got.length >= sent.length), `${p.got.length} of ${sent.length}`);
      assert.deepEqual(
        p.got.map((b) => b.length),
        sent.map((b) => b.length),
      );
      assert.deepEqual(p.got, sent);
      const st = s.stats();
      assert.equal(st.datagrams, sent.length);
      // 100 B: 64 + 64 + 23 (22 and the 37-byte one); 1200 B: 11; 20 000 B: 3 + the short one = 4
      assert.equal(st.gsoMessages, 5, JSON.stringify(st));
      assert.equal(st.calls, 1);
    } finally {
      s.close();
      p.close();
    }
  });
}

test('sendSegments: one buffer cut into datagrams of a size (the last shorter), without a copy', async () => {
  const p = await peer('::1');
  const s = await createUdpSender({ type: 'udp6' });
  try {
    const buf = randomBytes(100 * 70 + 30);
    const at = (i: number) => buf.subarray(i * 70, Math.min(buf.length, i * 70 + 70));
    const to = { address: '::1', port: p.port };
    assert.equal(await s.sendSegments(buf, 70, to), 101);
    assert.equal(s.trySendSegments(buf, 70, to, 98, 100), 2, 'a window of datagrams [98, 100)');
    assert.ok(await until(() => p.got.length >= 103), `${p.got.length}`);
    assert.deepEqual(p.got, [...Array.from({ length: 101 }, (_, i) => at(i)), at(98), at(99)]);
    assert.equal(p.got[100].length, 30, 'the short last one');
    // 64 + 37 with GSO, then the window of 2 (one GSO message)
    if (gso) assert.equal(s.stats().gsoMessages, 3, JSON.stringify(s.stats()));
    assert.throws(() => s.trySendSegments(buf, 0), /segment: '0'/);
    assert.throws(() => s.trySendSegments(buf, 70, to, 5, 200), /from\/end: '5\/200'/);
  } finally {
    s.close();
    p.close();
  }
});

test('one destination per datagram: runs break where the destination changes; rinfo-shaped and HOST:PORT targets', async () => {
  const a = await peer('127.0.0.1');
  const b = await peer('::1');
  const s = await createUdpSender({ type: 'udp6' }); // an IPv6 socket sends to IPv4 destinations too
  try {
    const sent = run(200, 64);
    const to = sent.map((_, i) =>
      (i >> 4) % 2 ? `[::1]:${b.port}` : { address: '127.0.0.1', port: a.port },
    );
    assert.equal(await s.sendBatch(sent, to), 200);
    assert.ok(await until(() => a.got.length + b.got.length >= 200));
    assert.deepEqual(
      a.got,
      sent.filter((_, i) => !((i >> 4) % 2)),
    );
    assert.deepEqual(
      b.got,
      sent.filter((_, i) => (i >> 4) % 2),
    );
    if (gso) assert.equal(s.stats().gsoMessages, Math.ceil(200 / 16), 'one GSO message per run to one place');
    // one destination for the whole call
    const before = b.got.length;
    assert.equal(await s.sendBatch([Buffer.from('one')], { host: '::1', port: b.port }), 1);
    assert.ok(await until(() => b.got.length === before + 1));
    assert.equal(b.got[before].toString(), 'one');
  } finally {
    s.close();
    a.close();
    b.close();
  }
});

test('trySendBatch sends a window [from, end) and returns how many went', async () => {
  const p = await peer('127.0.0.1');
  const s = await createUdpSender({ to: `127.0.0.1:${p.port}` });
  try {
    const sent = run(10, 30);
    assert.equal(s.trySendBatch(sent, undefined, 3, 7), 4);
    assert.ok(await until(() => p.got.length >= 4));
    assert.deepEqual(p.got, sent.slice(3, 7));
  } finally {
    s.close();
    p.close();
  }
});

test('bad input names the option and the value; sends after close throw; nothing is left open', async () => {
  const s = await createUdpSender({ to: '127.0.0.1:9' });
  const usage = (re: RegExp, option?: string) => (e: unknown) =>
    e instanceof UsageError && re.test(e.message) && (option === undefined || e.option === option);
  await assert.rejects(
    s.sendBatch([Buffer.alloc(10), Buffer.alloc(MAX_DATAGRAM + 1)]),
    usage(/datagrams\[1\]: '65508 bytes' \(expected at most 65507 bytes/, 'datagrams[1]'),
  );
  assert.equal(s.stats().datagrams, 0, 'nothing of a bad batch went');
  assert.throws(() => s.trySendBatch(['text' as unknown as Buffer]), usage(/datagrams\[0\]: 'a string'/));
  assert.throws(
    () => s.trySendBatch([Buffer.alloc(1)], 'localhost:9'),
    usage(/to: 'localhost' \(expected an IP address/),
  );
  assert.throws(
    () => s.trySendBatch([Buffer.alloc(1)], { address: '127.0.0.1', port: 0 }),
    usage(/to: '0'/, 'to'),
  );
  assert.throws(
    () => s.trySendBatch([Buffer.alloc(1), Buffer.alloc(1)], ['127.0.0.1:9']),
    usage(/to: '1 destinations'/),
  );
  await assert.rejects(createUdpSender({ batch: 0 }), usage(/batch: '0'/, 'batch'));
  await assert.rejects(createUdpSender({ type: 'tcp' as 'udp4' }), usage(/type: 'tcp'/, 'type'));
  await assert.rejects(createUdpSender({ to: 'nowhere' }), usage(/to: 'nowhere'/, 'to'));
  const fd = s.fd;
  assert.ok(existsSync(`/proc/self/fd/${fd}`));
  s.close();
  s.close(); // idempotent
  await assert.rejects(s.sendBatch([Buffer.alloc(1)]), usage(/the sender is closed/, 'sendBatch'));
  assert.throws(() => s.trySendBatch([Buffer.alloc(1)]), usage(/the sender is closed/));
  assert.ok(fd >= 0);
  assert.equal(existsSync(`/proc/self/fd/${fd}`), false, 'its socket is closed');
});

test('a datagram the kernel refuses rejects with its index, the count and the errno name', async () => {
  const p = await peer('127.0.0.1');
  const port = p.port;
  p.close(); // nobody listens: the connected socket learns ECONNREFUSED from the ICMP reply
  const s = await createUdpSender({ to: `127.0.0.1:${port}`, gso: false, batch: 1 });
  try {
    await s.sendBatch([Buffer.from('a')]);
    const e = await s.sendBatch([Buffer.from('b'), Buffer.from('c')]).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(e instanceof UdpSendError, String(e));
    assert.equal(e.code, 'ECONNREFUSED');
    assert.equal(e.index, 0);
    assert.equal(e.count, 1);
    assert.equal(e.sent, 0);
    assert.equal(s.stats().errorsByCode.ECONNREFUSED, 1);
  } finally {
    s.close();
  }
});

test('a segment larger than the MTU: the kernel refuses GSO (EMSGSIZE, EINVAL before 6.x), the run goes plain, the refusal is remembered', {
  skip:
    (process.getuid?.() !== 0 && 'needs root for a network namespace') ||
    (!gso && 'this kernel refuses UDP_SEGMENT'),
}, () => {
  // in a namespace of its own, lo has an MTU of 1500: a 2000-byte GSO segment cannot go out
  const child = fileURLToPath(new URL('./sender-mtu.child.ts', import.meta.url));
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', `ip link set lo mtu 1500 up && exec "${process.execPath}" --import tsx "${child}"`],
    { encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
  assert.equal(out.equal, true, 'every datagram arrived unchanged');
  assert.match(out.refusal.code, /^(EINVAL|EMSGSIZE)$/);
  assert.equal(out.refusal.segment, 2000);
  assert.match(out.warning, /GSO refused \((EINVAL|EMSGSIZE): segments of 2000 bytes\)/);
  assert.equal(out.warnings, 1, 'warned once');
  assert.equal(out.usingGso, true, '1000-byte runs still go with GSO');
  assert.ok(out.gsoMessages >= 1, JSON.stringify(out));
  assert.equal(out.secondCalls, 1, 'the second batch of 2000-byte datagrams went plain at once');
});
