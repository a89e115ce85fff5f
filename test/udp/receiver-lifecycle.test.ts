// The receiver's life cycle, as Node's own objects have it: readers start at the first batch asked
// for, leaving a `for await` closes, close() is idempotent, ref()/unref(), an AbortSignal closes, and
// a process whose receivers are all closed or unref'd exits by itself (checked in child processes).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createUdpReceiver } from '../../src/udp/receiver.js';
import { sendRaw, until } from './helpers.js';

const INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
const HELPERS = fileURLToPath(new URL('./helpers.ts', import.meta.url));

/** Runs an ES module given as text in a child node (through tsx, from src), with a time limit. */
function runChild(code: string, flags: string[] = [], timeout = 15_000) {
  return spawnSync(process.execPath, ['--import', 'tsx', ...flags, '--input-type=module', '-e', code], {
    encoding: 'utf8',
    timeout,
  });
}

test('a script that breaks out of the for await exits by itself; what was queued is unread, not dropped', () => {
  const code = `
    import { createUdpReceiver } from ${JSON.stringify(INDEX)};
    import { sendRaw, until } from ${JSON.stringify(HELPERS)};
    const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, batch: 1 });
    await sendRaw('127.0.0.1', r.port, Array.from({ length: 10 }, () => Buffer.alloc(32)));
    for await (const b of r) {
      await until(() => r.stats().queued === 9);
      break;
    }
    const s = r.stats();
    console.log(JSON.stringify({ received: s.received, unread: s.unread, userspaceDrops: s.userspaceDrops }));
  `;
  const c = runChild(code);
  assert.equal(c.signal, null, `the script did not exit by itself: ${c.stderr}`);
  assert.equal(c.status, 0, c.stderr);
  assert.deepEqual(JSON.parse(c.stdout), { received: 1, unread: 9, userspaceDrops: 0 });
});

test('an unref()ed receiver lets the process exit; a ref()ed one waiting for a batch keeps it alive', async () => {
  const start = `
    import { createUdpReceiver } from ${JSON.stringify(INDEX)};
    const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  `;
  const unrefd = runChild(`${start} r.unref(); await r.start(); void r.nextBatch(); console.log('ok');`);
  assert.equal(unrefd.signal, null, unrefd.stderr);
  assert.equal(unrefd.stdout.trim(), 'ok');
  // the ref()ed one: still running a second after it said it was waiting
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `${start} r.unref().ref(); void r.nextBatch(); console.log('waiting');`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
    const early = await Promise.race([exited.then(() => true), sleep(1000).then(() => false)]);
    assert.equal(early, false, 'a ref()ed receiver waiting for a batch keeps the process alive');
  } finally {
    child.kill();
  }
});

test('the reader thread starts without the flags the application was started with (node --input-type=module -e)', () => {
  const c = runChild(`
    import { createUdpReceiver } from ${JSON.stringify(INDEX)};
    import { sendRaw } from ${JSON.stringify(HELPERS)};
    const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
    await sendRaw('127.0.0.1', r.port, [Buffer.from('hello')]);
    const b = await r.nextBatch();
    console.log(b.data.subarray(b.offsets[0], b.offsets[0] + b.lengths[0]).toString());
    await r.close();
  `);
  assert.equal(c.status, 0, c.stderr);
  assert.equal(c.stdout.trim(), 'hello');
  assert.doesNotMatch(c.stderr, /UDP reader/);
});

test('the readers start at the first batch asked for: until then the kernel holds the datagrams', async () => {
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  try {
    await sendRaw(
      '127.0.0.1',
      r.port,
      Array.from({ length: 100 }, () => Buffer.alloc(64)),
    );
    const before = r.stats();
    assert.equal(before.started, false);
    assert.equal(before.readerCalls, 0);
    let got = 0;
    for await (const b of r) {
      got += b.count;
      if (got >= 100) break;
    }
    assert.equal(got, 100);
    const s = r.stats();
    assert.equal(s.started, true);
    assert.deepEqual([s.kernelDrops, s.userspaceDrops, s.unread], [0, 0, 0]);
  } finally {
    await r.close();
  }
});

test('close() is idempotent, before or after start; an AbortSignal closes and ends the iteration', async () => {
  const a = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  await Promise.all([a.close(), a.close()]);
  await a.close();
  assert.equal(await a.nextBatch(), undefined);
  assert.equal(a.stats().started, false);

  const ac = new AbortController();
  const b = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, signal: ac.signal });
  const ended = (async () => {
    let n = 0;
    for await (const x of b) n += x.count;
    return n;
  })();
  await sendRaw('127.0.0.1', b.port, [Buffer.alloc(8)]);
  assert.ok(await until(() => b.stats().received === 1));
  ac.abort();
  assert.equal(await ended, 1);
  await b.close();

  const gone = AbortSignal.abort();
  const c = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false, signal: gone });
  assert.equal(await c.nextBatch(), undefined, 'an aborted signal closes at once');
});

// found by the hostile sweep (issue 23): a reader thread that died left the consumer waiting for a
// batch forever (sink udp --idle ran on, printing received 0): now the next batch throws, once what
// was taken has been handed out, and the warning says why
test('a reader thread that ends unasked makes the next batch throw instead of waiting forever', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  const r = await createUdpReceiver({ listen: '127.0.0.1:0', gro: false });
  try {
    await r.start();
    const rings = (r as unknown as { rings: { worker: { terminate(): Promise<number> } }[] }).rings;
    await rings[0].worker.terminate();
    const outcome = await Promise.race([
      r.nextBatch().then(
        () => 'a batch',
        (err: Error) => err.message,
      ),
      sleep(5000).then(() => 'still waiting after 5 s'),
    ]);
    assert.match(outcome, /127\.0\.0\.1:\d+: UDP reader thread ended \(exit code 1\) before it was stopped/);
    await sleep(10);
    assert.ok(
      warnings.some((w) => /UDP reader thread ended/.test(w)),
      warnings.join('\n'),
    );
  } finally {
    process.off('warning', onWarning);
    await r.close();
  }
});
