// scripts/udp-send-rate.ts runs for a fraction of a second: every sender (node:dgram, sendBatch plain
// and GSO, the C UDP_SEGMENT reference, blast udp --gso; paced at half the C rate, the C sender and
// blast) prints its line, its receiver counted what it sent, and the summary gives each sender's ratio
// to node:dgram and each paced sender's reached ÷ asked. Bounded to 120 s. No rate is asserted
// (figures, not tests). c-mmsg is left out for time: it is c-gso's program.
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
    [
      '--import',
      'tsx',
      SCRIPT,
      ...['--seconds', '0.3', '--runs', '1', '--pace', '0.5'],
      ...['--only', 'dgram,batch,gso,c-gso,blast'],
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => `${l.kind}${l.fraction ? `@${l.fraction}` : ''}`),
    ['dgram', 'batch', 'gso', 'c-gso', 'blast', 'c-gso@0.5', 'blast@0.5'],
  );
  const R = lines.find((l) => l.kind === 'c-gso').received.datagramsPerSecond;
  for (const l of lines.filter((x) => x.fraction)) assert.equal(l.asked, 0.5 * R);
  for (const l of lines) {
    assert.ok(l.sent.sent > 0, JSON.stringify(l));
    // what the receiver counted plus what the kernel dropped is what went (dgram counts its calls)
    assert.ok(l.received.received > 0, JSON.stringify(l));
    assert.ok(l.received.received + l.received.kernelDrops <= l.sent.sent, JSON.stringify(l));
  }
  for (const k of ['batch', 'gso', 'c-gso', 'blast'])
    assert.match(r.stdout, new RegExp(`^${k} ÷ dgram: median \\d+\\.\\d\\d× `, 'm'));
  for (const k of ['c-gso', 'blast'])
    assert.match(r.stdout, new RegExp(`^${k} at 0.5 × c-gso: reached ÷ asked median \\d\\.\\d{3} `, 'm'));
});

test('scripts/udp-send-rate.ts: a bad option is refused before anything runs', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--only', 'dgram,fast'], {
    encoding: 'utf8',
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--only: expected some of dgram,batch,gso,c-mmsg,c-gso,blast, got 'dgram,fast'/);
});
