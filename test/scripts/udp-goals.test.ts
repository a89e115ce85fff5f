// scripts/udp-goals.ts runs for a fraction of a second: the C references build and run (recvmmsg,
// sendmmsg, UDP_SEGMENT, UDP_GRO), every pair prints its line, each account is exact (the C receiver
// and sockbuf's sink both count every datagram sent; with UDP_GRO the kernel counts dropped skbs of up
// to 64 datagrams, so that pair is bounded), and the summary comes. Bounded to 90 s.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/udp-goals.ts', import.meta.url));

test('scripts/udp-goals.ts: C pairs and sockbuf pairs, every datagram accounted for', {
  timeout: 120_000,
}, () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--seconds', '0.3', '--fractions', '0.3'],
    { encoding: 'utf8', timeout: 90_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => l.name.replace(/--rate \d+/, '--rate R')),
    [
      'C recvmmsg <- C sendmmsg',
      'sink udp (defaults) <- C sendmmsg',
      'sink udp --on-full drop <- C sendmmsg',
      'C UDP_GRO <- C UDP_SEGMENT',
      'sink udp (GRO) <- blast udp --gso on --rate R (0.3 × C pair)',
    ],
  );
  for (const l of lines) {
    assert.ok(l.sent.sent > 0, JSON.stringify(l.sent));
    if (l.name === 'C UDP_GRO <- C UDP_SEGMENT') {
      // with UDP_GRO the kernel counts a dropped skb once, and one holds up to 64 segments (a GSO
      // send's): exact only without drops, else between the two bounds
      const { received, kernelDrops } = l.received;
      assert.ok(
        received + kernelDrops <= l.sent.sent && l.sent.sent <= received + 64 * kernelDrops,
        JSON.stringify(l),
      );
      if (!kernelDrops) assert.equal(received, l.sent.sent, JSON.stringify(l));
    } else if (l.name.startsWith('C '))
      assert.equal(l.received.received + l.received.kernelDrops, l.sent.sent, JSON.stringify(l));
    else assert.equal(l.received.accounting.unaccounted, 0, JSON.stringify(l.received.accounting));
  }
  assert.match(r.stdout, /summary \(load average at the end: /);
  assert.match(r.stdout, /sockbuf GSO->GRO 0\.3×: rate \d+\/s, sent \d+, received \d+/);
});

test('scripts/udp-goals.ts: a bad option is refused before anything runs', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--seconds', 'x'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--seconds: expected more than 0 and at most 600, got 'x'/);
});
