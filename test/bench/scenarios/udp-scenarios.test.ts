// The UDP ladder end to end through `sockbuf bench udp` with short options: seed 004's columns are
// filled by real ends on loopback (figures are not asserted beyond what must hold on any host).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { which } from '../../../src/sys/process.js';

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

type Row = Record<string, unknown>;
const median = (row: Row, k: string) => (row[k] as { median: number }).median;

test('bench udp: the drift of the last datagram is measured (sender end → last arrival, seconds)', {
  timeout: 120_000,
}, async () => {
  const r = await bench(['udp', '--receivers', 'dgram,batch', '--rates', '2000', '--duration', '500ms']);
  assert.equal(r.code, 0, r.stderr);
  for (const row of r.doc.results as Row[]) {
    const drift = median(row, 'driftSeconds');
    // the last datagram arrives after the sender's last send, well within the sink's idle second
    assert.ok(drift > -0.05 && drift < 1, `${row.path}: drift ${drift} s`);
  }
});

test('bench udp --receivers netcat: OpenBSD nc -u -l as the receiver, whole datagrams counted from its byte stream', {
  skip: which('nc') ? false : 'nc is not installed (Debian: netcat-openbsd)',
  timeout: 120_000,
}, async () => {
  const r = await bench(['udp', '--receivers', 'netcat', '--rates', '1000', '--duration', '500ms']);
  assert.equal(r.code, 0, r.stderr);
  const [row] = r.doc.results as Row[];
  assert.equal(row.path, 'netcat');
  const sent = median(row, 'sent');
  const received = median(row, 'received');
  assert.ok(sent >= 400, `sent ${sent}`);
  // at 1000/s on loopback nc keeps up: every datagram (none counted twice, trailers apart)
  assert.ok(received <= sent && received >= sent * 0.98, `received ${received} of ${sent}`);
  assert.equal(median(row, 'dropped'), sent - received);
  assert.equal(typeof median(row, 'kernelDrops'), 'number');
});
