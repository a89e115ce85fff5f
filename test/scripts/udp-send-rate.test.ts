// scripts/udp-send-rate.ts runs for a fraction of a second: every sender (node:dgram, sendBatch plain
// and GSO, the C references) prints its line, its receiver counted what it sent, and the summary
// gives each sender's ratio to node:dgram. Bounded to 120 s. No rate is asserted (figures, not tests).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/udp-send-rate.ts', import.meta.url));

test('scripts/udp-send-rate.ts: each sender counted by its receiver, ratios to node:dgram', {
  timeout: 150_000,
}, () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--seconds', '0.3', '--runs', '1', '--port', '47373'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.kind),
    ['dgram', 'batch', 'gso', 'c-mmsg', 'c-gso'],
  );
  for (const l of lines) {
    assert.ok(l.sent.sent > 0, JSON.stringify(l));
    // what the receiver counted plus what the kernel dropped is what went (dgram counts its calls)
    assert.ok(l.received.received > 0, JSON.stringify(l));
    assert.ok(l.received.received + l.received.kernelDrops <= l.sent.sent, JSON.stringify(l));
  }
  for (const k of ['batch', 'gso', 'c-mmsg', 'c-gso'])
    assert.match(r.stdout, new RegExp(`^${k} ÷ dgram: median \\d+\\.\\d\\d× `, 'm'));
});

test('scripts/udp-send-rate.ts: a bad option is refused before anything runs', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--only', 'dgram,fast'], {
    encoding: 'utf8',
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--only: expected some of dgram,batch,gso,c-mmsg,c-gso, got 'dgram,fast'/);
});
