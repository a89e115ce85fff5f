// The third-party application (Etsy's StatsD, npm `statsd`) on node:dgram and, unchanged, on
// sockbuf/dgram through `node --import sockbuf/dgram/register`: every datagram sent at a modest rate
// arrived and was processed (StatsD's own counters: packets, metrics, each key's sum), and the preload
// really gave it sockbuf's socket (its receive buffer is sockbuf's 8 MiB, stock keeps the kernel's
// default). Then scripts/statsd-bench.ts runs for a fraction of a second (no rate is asserted).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ROOT, rcvbufOf, settle, startStatsd, type Variant } from '../../scripts/lib/statsd.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/statsd-bench.ts', import.meta.url));
const KEYS = 16;
const COUNT = 2000;

/** COUNT counter lines, bench.c<i % KEYS>:1|c, 25 every 10 ms (~2.5k/s): modest, in bursts. */
async function feed(port: number): Promise<void> {
  const s = dgram.createSocket('udp4');
  for (let i = 0; i < COUNT; i++) {
    s.send(`bench.c${i % KEYS}:1|c`, port, '127.0.0.1');
    if (i % 25 === 24) await sleep(10);
  }
  await new Promise<void>((r) => s.close(() => r()));
}

for (const variant of ['node:dgram', 'sockbuf/dgram'] as Variant[]) {
  test(`StatsD on ${variant}: every datagram arrived and was processed (its own counters)`, async () => {
    assert.ok(existsSync(join(ROOT, 'dist/dgram-register.js')), 'dist/: run npm run build');
    const dir = mkdtempSync(join(tmpdir(), 'sockbuf-statsd-test-'));
    const s = await startStatsd(variant, dir, undefined, 60);
    try {
      const rb = rcvbufOf(s.port);
      const rmemDefault = Number(readFileSync('/proc/sys/net/core/rmem_default', 'utf8'));
      if (variant === 'sockbuf/dgram') assert.ok((rb ?? 0) >= 8 * 1024 * 1024, `sockbuf's socket: rb ${rb}`);
      else assert.equal(rb, rmemDefault, "stock statsd keeps the kernel's default receive buffer");
      await feed(s.port);
      const c = await settle(s, 300, 10_000);
      assert.equal(c['statsd.packets_received'], COUNT, JSON.stringify(c));
      assert.equal(c['statsd.metrics_received'], COUNT);
      assert.equal(c['statsd.bad_lines_seen'], 0);
      for (let k = 0; k < KEYS; k++) assert.equal(c[`bench.c${k}`], COUNT / KEYS, `bench.c${k}`);
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('scripts/statsd-bench.ts: each variant of StatsD counted what the C sender sent, and a verdict', {
  timeout: 120_000,
}, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--rates', '2k', '--seconds', '0.25'], {
    encoding: 'utf8',
    timeout: 100_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const steps = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  // the ladder's one rate, then (when node:dgram lost nothing there) all three at 1.5 × it
  const per = (v: string) => steps.filter((x) => x.variant === v).length;
  assert.ok(per('node:dgram') >= 1 && per('node:dgram') <= 2, r.stdout);
  for (const v of ['node:dgram 8MiB', 'sockbuf/dgram']) assert.equal(per(v), per('node:dgram'), v);
  for (const x of steps) {
    assert.equal(x.sent, x.rate === 2000 ? 500 : Math.round(x.rate * 0.25), JSON.stringify(x));
    assert.equal(x.processed + x.lost, x.sent);
    assert.equal(x.metricSum, x.processed, 'one metric line per datagram, each added up');
  }
  assert.match(r.stdout, /^loss-free rate: node:dgram \S+, node:dgram 8MiB \S+, sockbuf\/dgram \S+ /m);
  assert.match(r.stdout, /^issue 22 goal .*: (met|NOT met|no verdict .*)$/m);
});

test('scripts/statsd-bench.ts: a bad option is refused before anything runs', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--rates', '10k,fast'], {
    encoding: 'utf8',
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--rates: 'fast' is not a rate/);
});
