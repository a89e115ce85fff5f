import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { POLL_DEFAULT_US } from '../../src/tcp/poll.js';
import {
  ADAPTIVE_MAX_BYTES,
  ADAPTIVE_MIN_BYTES,
  formatReader,
  parseReader,
  Reader,
  resolveReader,
  sharedReadBufferBytes,
} from '../../src/tcp/reader.js';

test('parseReader accepts the four forms', () => {
  assert.deepEqual(parseReader('adaptive'), {
    kind: 'adaptive',
    min: ADAPTIVE_MIN_BYTES,
    max: ADAPTIVE_MAX_BYTES,
    poll: 'loopback',
  });
  const poll = 'loopback';
  assert.deepEqual(parseReader('adaptive:min=1K,max=256K'), {
    kind: 'adaptive',
    min: 1024,
    max: 262144,
    poll,
  });
  assert.deepEqual(parseReader('adaptive:max=1M'), {
    kind: 'adaptive',
    min: ADAPTIVE_MIN_BYTES,
    max: 1048576,
    poll,
  });
  assert.deepEqual(parseReader('adaptive:min=256K'), { kind: 'adaptive', min: 262144, max: 1048576, poll });
  assert.deepEqual(parseReader('adaptive:poll=0'), { ...parseReader('adaptive'), poll: 0 });
  assert.deepEqual(parseReader('adaptive:max=64K,poll=50us'), {
    ...parseReader('adaptive:max=64K'),
    poll: 50,
  });
  assert.equal(formatReader(parseReader('adaptive:poll=0')), 'adaptive:min=512,max=1048576,poll=0us');
  assert.deepEqual(
    parseReader(formatReader(parseReader('adaptive:poll=1ms'))),
    parseReader('adaptive:poll=1000us'),
  );
  assert.deepEqual(parseReader(`adaptive:poll=${POLL_DEFAULT_US}us`), {
    ...parseReader('adaptive'),
    poll: 200,
  });
  assert.equal(
    formatReader(parseReader('adaptive:poll=200us')),
    'adaptive:min=512,max=1048576,poll=200us',
    'an explicit bound applies to every peer, so it is written out',
  );
  assert.deepEqual(resolveReader({ adaptive: { poll: 0.1 } }), {
    kind: 'adaptive',
    min: 512,
    max: 1048576,
    poll: 100,
  });
  assert.deepEqual(parseReader('fixed:64K'), { kind: 'fixed', size: 65536 });
  assert.deepEqual(parseReader('data'), { kind: 'data' });
  assert.equal(formatReader(parseReader('adaptive:min=1K,max=2K')), 'adaptive:min=1024,max=2048');
  assert.deepEqual(resolveReader({ adaptive: { max: 64 * 1024 } }), {
    kind: 'adaptive',
    min: 512,
    max: 65536,
    poll,
  });
  assert.deepEqual(resolveReader({ fixed: 8192 }), { kind: 'fixed', size: 8192 });
});

test('bad --reader values are usage errors naming the option and the value', () => {
  const cases: [string, RegExp][] = [
    ['banana', /for reader: 'banana'/],
    ['adaptive:min=64K,max=8K', /for reader: max=8192 is below min=65536/],
    ['adaptive:min=1K,min=2K', /for reader: 'adaptive:min=1K,min=2K'/],
    ['adaptive:foo=1', /for reader/],
    ['fixed:', /for reader/],
    ['fixed:10', /for reader: fixed size 10/],
    ['fixed:lots', /for reader: 'lots'/],
    ['adaptive:poll=2ms', /for reader: '2ms' \(expected a polling bound from 0 to 1000 µs\)/],
    ['adaptive:poll=fast', /for reader: 'fast'/],
    ['adaptive:poll=0,poll=0', /for reader: 'adaptive:poll=0,poll=0'/],
  ];
  for (const [v, re] of cases) {
    assert.throws(
      () => parseReader(v),
      (e: unknown) => e instanceof UsageError && e.option === 'reader' && re.test(e.message),
      v,
    );
  }
});

/** A server that writes `bulk` bytes at once, then `tail` small writes `gapMs` apart, then ends. */
async function server(bulk: number, tail: number, gapMs: number) {
  const srv = net.createServer((s) => {
    s.write(Buffer.alloc(bulk, 1));
    let i = 0;
    const t = setInterval(() => {
      if (i++ >= tail) {
        clearInterval(t);
        s.end();
      } else s.write(Buffer.alloc(100, 2));
    }, gapMs);
    s.on('error', () => clearInterval(t));
    s.on('close', () => clearInterval(t));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { srv, port: (srv.address() as net.AddressInfo).port };
}

test('loopback: the adaptive reader grows on a bulk transfer and shrinks when the sender slows', {
  timeout: 30_000,
}, async () => {
  const { srv, port } = await server(16 * 1024 * 1024, 150, 1);
  // max 64 KiB: the prober's first cap (PROBE_START_BYTES), so the sizer's own rule is what grows it
  const reader = new Reader(parseReader('adaptive:min=512,max=64K'));
  let got = 0;
  const sizes: number[] = [];
  reader.consumer = (chunk) => {
    got += chunk.length;
    sizes.push(reader.stats().sizeBytes);
  };
  const sock = net.connect({ host: '127.0.0.1', port, onread: reader.onread() } as net.NetConnectOpts);
  reader.attach(sock);
  await new Promise<void>((resolve, reject) => {
    sock.on('end', () => resolve());
    sock.on('error', reject);
  });
  srv.close();
  const st = reader.stats();
  assert.equal(got, 16 * 1024 * 1024 + 150 * 100);
  assert.equal(st.bytes, got);
  assert.ok(Math.max(...sizes) === 64 * 1024, 'grew to max during the bulk part');
  assert.ok(st.grows >= 7, `grew (${st.grows})`);
  assert.ok(st.shrinks >= 7, `shrank (${st.shrinks})`);
  assert.equal(st.sizeBytes, 512, 'back at min after the slow tail');
  assert.equal(st.ownBufferBytes, 0);
  assert.ok(sharedReadBufferBytes() >= 64 * 1024);
  assert.equal(
    st.readSizeHistogram.reduce((a, b) => a + b.reads, 0),
    st.reads,
  );
  assert.ok(st.readSizeHistogram.some((b) => b.le === 64 * 1024 && b.reads > 0));
  assert.ok(
    st.readSizeHistogram.some((b) => b.le === 128 && b.reads > 0),
    'the 100-byte reads',
  );
});

for (const spec of ['fixed:16K', 'data'] as const) {
  test(`loopback: the ${spec} reader delivers every byte and counts reads`, { timeout: 30_000 }, async () => {
    const { srv, port } = await server(4 * 1024 * 1024, 3, 1);
    const reader = new Reader(parseReader(spec));
    let sum = 0;
    reader.consumer = (chunk) => {
      for (let i = 0; i < chunk.length; i += 4096) sum += chunk[i];
    };
    const sock = net.connect({ host: '127.0.0.1', port, onread: reader.onread() } as net.NetConnectOpts);
    reader.attach(sock);
    await new Promise<void>((resolve, reject) => {
      sock.on('end', () => resolve());
      sock.on('error', reject);
    });
    srv.close();
    const st = reader.stats();
    assert.equal(st.bytes, 4 * 1024 * 1024 + 300);
    assert.ok(sum > 0);
    assert.ok(st.reads > 0);
    if (spec === 'fixed:16K') {
      assert.equal(st.sizeBytes, 16384);
      assert.equal(st.ownBufferBytes, 16384);
      assert.equal(st.grows + st.shrinks, 0);
      assert.ok(st.readSizeHistogram.every((b) => b.le <= 16384));
    }
  });
}

test('a consumer that throws closes the socket with its error', { timeout: 30_000 }, async () => {
  const { srv, port } = await server(1024 * 1024, 0, 1);
  const reader = new Reader(parseReader('adaptive'));
  reader.consumer = () => {
    throw new Error('bad frame');
  };
  const sock = net.connect({ host: '127.0.0.1', port, onread: reader.onread() } as net.NetConnectOpts);
  reader.attach(sock);
  const err = await new Promise<Error>((resolve) => sock.on('error', resolve));
  assert.equal(err.message, 'bad frame');
  assert.equal(reader.reads, 1);
  srv.close();
});

test('per read: a full read is handed over as the buffer, a new view only when the size changed', () => {
  const r = new Reader(parseReader('adaptive:min=1K,max=4K'));
  const o = r.onread();
  assert.ok(o && typeof o.buffer === 'function');
  const gen = o.buffer;
  const first = gen();
  assert.equal(first?.length, 1024);
  assert.equal(gen(), first, 'same size: the same view (Node stores what it gets: see Reader.prime)');
  const got: Uint8Array[] = [];
  r.consumer = (chunk) => {
    got.push(chunk);
  };
  o.callback(1024, first as Uint8Array); // a full read: the size doubles
  assert.equal(got[0], first, 'the buffer itself, no view');
  const next = gen();
  assert.equal(next?.length, 2048);
  assert.equal(gen(), next);
  o.callback(100, next as Uint8Array);
  assert.equal(got[1].length, 100, 'a short read: a view of its bytes');
  assert.equal(got[1].buffer, (next as Uint8Array).buffer);
  assert.equal(r.stats().fullReads, 1);
});
