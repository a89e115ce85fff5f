// The TCP scenarios end to end through `sockbuf bench`, with short options (figures are not asserted:
// the benchmark output is what proves performance; here each scenario must run and fill its columns).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'cli', 'main.ts');

function bench(
  args: string[],
): Promise<{ code: number | null; doc: Record<string, unknown>; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'bench', ...args, '--repeat', '1', '--json'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, doc: out ? JSON.parse(out) : {}, stderr: err })),
  );
}

type Row = Record<string, unknown> & { reader?: string; policy?: string };
const median = (row: Row, k: string) => (row[k] as { median: number }).median;

test('bench drain: a row per reader with a rate; --expect prints the ratio to data', {
  timeout: 120_000,
}, async () => {
  const r = await bench([
    'drain',
    '--bytes',
    '32M',
    '--readers',
    'data,adaptive,fixed:64K,adaptive:max=1M+poll=0',
    '--expect',
    'adaptive/data > 0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.doc.results as Row[];
  assert.deepEqual(
    rows.map((x) => x.reader),
    ['data', 'adaptive', 'fixed:64K', 'adaptive:max1M+poll0'],
  );
  // '+' joins an adaptive reader's bounds in the list: the sink got both
  assert.equal(rows[3].readerSpec, 'adaptive:min=512,max=1048576,poll=0us');
  for (const row of rows) {
    assert.ok(median(row, 'bytesPerSecond') > 0);
    // the sink's CPU per byte read, and blast's CPU ÷ its time (one thread, plus V8's helpers)
    assert.ok(
      median(row, 'receiverCpuNsPerByte') > 0 && median(row, 'receiverCpuNsPerByte') < 1000,
      JSON.stringify(row),
    );
    assert.ok(median(row, 'senderBusy') > 0 && median(row, 'senderBusy') < 2, JSON.stringify(row));
  }
  assert.match(r.stderr, /bytesPerSecond\[adaptive\] \/ bytesPerSecond\[data\] = /);
});

test('bench tcp: policy × size with the sender-side limited % and window scales', {
  timeout: 120_000,
}, async () => {
  const r = await bench(['tcp', '--duration', '1500ms', '--sizes', '4000', '--policies', 'auto,rcvbuf=64K']);
  assert.equal(r.code, 0, r.stderr);
  const rows = r.doc.results as Row[];
  assert.deepEqual(
    rows.map((x) => x.policy),
    ['auto', 'rcvbuf:65536'],
  );
  for (const row of rows) {
    assert.ok(median(row, 'bytesPerSecond') > 0);
    assert.ok(median(row, 'messagesPerSecond') > 0);
    assert.match(String(row.wscale), /^\d+,\d+$/);
  }
});

test('bench ping and bench idle run with short options', { timeout: 120_000 }, async () => {
  const p = await bench([
    'ping',
    '--duration',
    '500ms',
    '--sizes',
    '250',
    '--inflight',
    '1,4',
    '--policies',
    'auto',
  ]);
  assert.equal(p.code, 0, p.stderr);
  for (const row of p.doc.results as Row[]) {
    assert.ok(median(row, 'roundTripsPerSecond') > 0);
    assert.ok(median(row, 'latencyP99Us') >= median(row, 'latencyP50Us'));
  }
  const i = await bench(['idle', '--conns', '200', '--readers', 'adaptive,fixed:64K']);
  assert.equal(i.code, 0, i.stderr);
  const [adaptive, fixed] = i.doc.results as Row[];
  assert.equal(median(adaptive, 'conns'), 200);
  assert.equal(median(fixed, 'readBufferBytesPerConn'), 65536, 'a fixed reader owns its buffer');
  assert.ok(
    median(adaptive, 'readBufferBytesPerConn') < 1024,
    'adaptive: the shared buffer over 200 connections',
  );
});

test("bench ping and tcp --write-hwms: a point per water mark; with one set, the ping's writer waits for 'drain'", {
  timeout: 120_000,
}, async () => {
  const p = await bench([
    ...['ping', '--duration', '500ms', '--sizes', '100000', '--inflight', '8'],
    ...['--policies', 'auto,both=65535', '--write-hwms', 'default,64K'],
  ]);
  assert.equal(p.code, 0, p.stderr);
  const rows = p.doc.results as Row[];
  assert.deepEqual(
    rows.map((x) => `${x.policy} ${x.hwm}`),
    ['auto default', 'auto 65536', 'both:65535 default', 'both:65535 65536'],
  );
  for (const row of rows) {
    assert.ok(median(row, 'roundTripsPerSecond') > 0);
    // 100 000 B frames over a 64 KiB mark: every write waits; with no mark the writer never does
    if (row.hwm === 'default') assert.equal(median(row, 'drainWaits'), 0);
    else assert.ok(median(row, 'drainWaits') > 0, JSON.stringify(row));
  }
  const t = await bench([
    'tcp',
    '--duration',
    '1s',
    '--sizes',
    '4000',
    '--policies',
    'auto',
    '--write-hwms',
    '1M',
  ]);
  assert.equal(t.code, 0, t.stderr);
  assert.deepEqual(
    (t.doc.results as Row[]).map((x) => x.hwm),
    ['1048576'],
  );
  const bad = await bench(['ping', '--write-hwms', 'default,12X']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--write-hwms.*12X/);
});
