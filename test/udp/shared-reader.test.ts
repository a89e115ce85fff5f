// The process's one reader thread, through sockbuf/dgram sockets: a socket whose main thread falls
// behind (here: its listener blocks while a burst arrives, and the kernel drops) is handed to the
// thread, which delivers every datagram after that, in order, each with its sender and an ArrayBuffer
// of its own; several sockets share that one thread; close() frees the descriptor; with a queue bound,
// datagrams that waited longer in userspace are dropped and counted as stale; datagrams of every size
// come whole through the thread's packed ring.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { createSocket, type Socket } from '../../src/dgram.js';
import { DATA_BYTES } from '../../src/udp/shared-ring.js';

/**
 * A sender in another process (it keeps sending while this one is blocked): "port n from" → sends n
 * datagrams of 64 bytes numbered from `from`; with `mixed`, of 40 000, 4, 65 000 and 1 500 bytes in
 * turn, byte j of datagram k being (k + j) & 0xff.
 */
function sender(): {
  child: ChildProcess;
  send(port: number, n: number, from: number, mixed?: boolean): Promise<number>;
} {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:dgram').createSocket('udp4');
       s.bind(0, '127.0.0.1', () => console.log(s.address().port));
       require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
         const [port, n, from, mixed] = l.split(' ').map(Number);
         let left = n;
         for (let i = 0; i < n; i++) {
           const b = Buffer.alloc(mixed ? [40000, 4, 65000, 1500][i % 4] : 64);
           for (let j = 4; j < b.length; j++) b[j] = (from + i + j) & 0xff;
           b.writeUInt32LE(from + i, 0);
           s.send(b, port, '127.0.0.1', () => { if (--left === 0) console.log('sent'); });
         }
       });`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  const waiting: (() => void)[] = [];
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    lines.push(...d.split('\n').filter(Boolean));
    for (const w of waiting.splice(0)) w();
  });
  const nextLine = async () => {
    while (!lines.length) await new Promise<void>((r) => waiting.push(r));
    return lines.shift() as string;
  };
  const portP = nextLine().then(Number);
  return {
    child,
    async send(port, n, from, mixed = false) {
      const own = await portP;
      child.stdin?.write(`${port} ${n} ${from} ${mixed ? 1 : 0}\n`);
      assert.equal(await nextLine(), 'sent');
      return own;
    },
  };
}

const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const until = async (f: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!f() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  return f();
};
const threads = () => readdirSync('/proc/self/task').length;

/** A socket driven past its main thread: a listener that blocks while 1 500 datagrams arrive. */
async function handedOver(s: Socket, snd: ReturnType<typeof sender>, seen: number[]): Promise<void> {
  let blocked = false;
  s.on('message', (m: Buffer) => {
    seen.push(m.readUInt32LE(0));
    if (!blocked) {
      blocked = true;
      block(400);
    }
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  // the first datagram blocks the loop; meanwhile 1 500 more overflow a 64 KiB buffer
  const burst = snd.send(port, 1500, 0);
  await burst;
  // the next datagrams reach the 64th read, which sees the kernel's drops and hands the socket over
  await snd.send(port, 200, 10_000);
  assert.ok(await until(() => s.stats().mode === 'thread'), `handed over: ${JSON.stringify(s.stats())}`);
  // from here on the kernel keeps what comes (a loaded host may keep the thread off its CPU a while)
  s.setRecvBufferSize(4 * 1024 * 1024);
}

test('a socket that falls behind goes to the reader thread, which delivers everything after, in order', async () => {
  const snd = sender();
  const s = createSocket({ type: 'udp4', recvBufferSize: 65536 });
  const seen: number[] = [];
  const rinfos: { port: number; address: string }[] = [];
  const buffers: ArrayBufferLike[] = [];
  s.on('message', (m: Buffer, r) => {
    rinfos.push(r);
    buffers.push(m.buffer);
  });
  try {
    await handedOver(s, snd, seen);
    assert.ok(s.stats().kernelDrops > 0, 'the burst overflowed the buffer');
    const mark = seen.length;
    const from = await snd.send(s.address().port, 1000, 20_000);
    assert.ok(
      await until(() => seen.length >= mark + 1000),
      `${seen.length - mark} of 1000 after the handover`,
    );
    const after = seen.slice(mark);
    assert.deepEqual(
      after,
      Array.from({ length: 1000 }, (_, i) => 20_000 + i),
      'every one, in order',
    );
    const st = s.stats();
    assert.equal(st.mode, 'thread');
    assert.equal(st.handovers, 1);
    assert.ok(st.batches < st.received, 'the thread hands over batches');
    assert.deepEqual(rinfos.at(-1), { address: '127.0.0.1', family: 'IPv4', port: from, size: 64 });
    assert.equal(new Set(buffers.slice(mark)).size, 1000, 'each message its own ArrayBuffer');
  } finally {
    snd.child.kill();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

test('sockets on the reader thread share it; close() frees their descriptors', async () => {
  const snd = sender();
  const fds = () => readdirSync('/proc/self/fd').length;
  const ss = [0, 1, 2].map(() => createSocket({ type: 'udp4', recvBufferSize: 65536 }));
  const seen = ss.map(() => [] as number[]);
  const before = { threads: threads(), fds: fds() };
  try {
    for (let i = 0; i < ss.length; i++) await handedOver(ss[i], snd, seen[i]);
    assert.ok(
      threads() <= before.threads + 1,
      `one reader thread for 3 sockets (${before.threads} → ${threads()})`,
    );
    for (let i = 0; i < ss.length; i++) {
      const mark = seen[i].length;
      await snd.send(ss[i].address().port, 300, 50_000);
      assert.ok(
        await until(() => seen[i].length >= mark + 300),
        `socket ${i}: ${seen[i].length - mark} of 300`,
      );
    }
  } finally {
    snd.child.kill();
    await Promise.all(ss.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
  // the thread closes each descriptor at the end of its round: at once, as it wakes for the command
  assert.ok(await until(() => fds() <= before.fds - 3), `descriptors closed: ${before.fds} → ${fds()}`);
});

test('with maxQueueDelay, datagrams that waited longer in userspace are dropped and counted as stale', async () => {
  const snd = sender();
  const s = createSocket({ type: 'udp4', recvBufferSize: 65536, maxQueueDelay: 20 });
  const seen: number[] = [];
  try {
    await handedOver(s, snd, seen);
    // let what the handover burst left in the ring drain (delivered or stale) before counting
    for (let last = -1; last !== seen.length + s.stats().stale; ) {
      last = seen.length + s.stats().stale;
      await new Promise((r) => setTimeout(r, 200));
    }
    // on a loaded host the thread may wake late and the kernel (65 536-byte buffer) drop a few:
    // those are counted too, so every datagram is delivered, stale or a counted drop
    const lost = (st = s.stats()) => st.stale + st.kernelDrops + st.userspaceDrops;
    const stale0 = s.stats().stale;
    const lost0 = lost();
    const mark = seen.length;
    // the thread takes these at once; the main thread, blocked 400 ms, hands them over too late
    setImmediate(() => block(400));
    await snd.send(s.address().port, 100, 30_000);
    await until(() => seen.length - mark + lost() - lost0 >= 100);
    const st = s.stats();
    assert.ok(st.stale - stale0 > 0, `stale drops counted: ${JSON.stringify(st)}`);
    assert.equal(
      seen.length - mark + (lost(st) - lost0),
      100,
      `each one delivered, stale or a counted drop: ${JSON.stringify(st)}`,
    );
  } finally {
    snd.child.kill();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

test('the thread packs datagrams of every size into its ring: each arrives whole, across its wrap-around', async () => {
  const snd = sender();
  const s = createSocket({ type: 'udp4', recvBufferSize: 65536 });
  const seen: number[] = [];
  const got: Buffer[] = [];
  try {
    await handedOver(s, snd, seen);
    s.on('message', (m: Buffer) => {
      if (m.readUInt32LE(0) < 100_000) return; // what is left of the hand-over's bursts
      got.push(m);
      // the first blocks the main thread while the rest come: the thread fills the ring (its
      // DATA_BYTES), waits for room, and wraps around to its start while the ring is never empty
      if (got.length === 1) block(500);
    });
    // 320 datagrams, 8.5 MB: more than the ring holds, far less than the ring and the kernel hold
    const n = 160;
    assert.ok(2 * n * 26_625 > DATA_BYTES);
    await snd.send(s.address().port, 2 * n, 100_000, true);
    assert.ok(
      await until(() => got.length >= 2 * n),
      `${got.length} of ${2 * n}: ${JSON.stringify(s.stats())}`,
    );
    for (let k = 0; k < 2 * n; k++) {
      const m = got[k];
      assert.equal(m.length, [40000, 4, 65000, 1500][k % 4], `datagram ${k}'s length`);
      assert.equal(m.readUInt32LE(0), 100_000 + k, `datagram ${k} in order`);
      for (let j = 4; j < m.length; j++)
        if (m[j] !== ((100_000 + k + j) & 0xff)) assert.fail(`datagram ${k}: byte ${j} is ${m[j]}`);
    }
  } finally {
    snd.child.kill();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

test('prestart (the preload): the thread starts with no socket, exits 2 s after it runs unless a socket asks for it', async () => {
  // a fresh process: this one's reader is shared by the tests above
  const code = `
    import { readdirSync } from 'node:fs';
    import { setTimeout as sleep } from 'node:timers/promises';
    import { sharedReader } from ${JSON.stringify(new URL('../../src/udp/shared-reader.ts', import.meta.url).href)};
    const r = sharedReader();
    const tasks = () => readdirSync('/proc/self/task').length;
    const until = async (f) => { for (let i = 0; i < 500 && !f(); i++) await sleep(10); return f(); };
    const out = { before: tasks() };
    r.prestart();
    out.ran = await until(() => r.isRunning);
    out.running = tasks();
    await sleep(2600);
    out.unasked = { running: r.isRunning, tasks: tasks() };
    r.prestart();
    out.ranAgain = await until(() => r.isRunning);
    await r.start();
    await sleep(2600);
    out.asked = { running: r.isRunning };
    console.log(JSON.stringify(out));
    process.exit(0);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    text += d;
  });
  const status = await new Promise<number | null>((r) => child.once('exit', r));
  assert.equal(status, 0, text);
  const o = JSON.parse(text.trim().split('\n').pop() as string);
  assert.equal(o.ran, true, text);
  assert.ok(o.running > o.before, `a thread more while it runs: ${text}`);
  assert.equal(o.unasked.running, false, `no socket asked: it exited: ${text}`);
  assert.ok(o.unasked.tasks < o.running, `and its thread is gone: ${text}`);
  assert.equal(o.ranAgain, true, text);
  assert.equal(o.asked.running, true, `a socket asked: it stays: ${text}`);
});
