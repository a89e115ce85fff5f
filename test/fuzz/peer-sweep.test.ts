// The hostile sweep over what peers send to the running ends (test/fuzz/peer-sweep.ts), a few dozen
// inputs each here (npm run fuzz -- --peers N runs more): every end survives, takes a good peer
// after the bad ones, accounts for every connection and datagram, prints no raw control character,
// and leaves no process behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { helloSweep, iperf3Sweep, type PeerReport, serveSweep, udpSweep } from './peer-sweep.js';

const DIST = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const T = { timeout: 180_000 };
const ok = (r: PeerReport) => assert.deepEqual(r.problems, [], `${r.end}: ${JSON.stringify(r.counts)}`);

test('dist/ is built for the peer sweep', () => assert.ok(existsSync(DIST), 'npm run build'));
test('serve: 40 connections of hostile control lines, then a hello is answered', T, async () =>
  ok(await serveSweep(40, 'ci')),
);
test('sink tcp --iperf3: 40 hostile control connections, then a real iperf3 -c', T, async () =>
  ok(await iperf3Sweep(40, 'ci')),
);
test('sink udp: 3000 hostile headers and trailers, every datagram accounted for', T, async () =>
  ok(await udpSweep(3000, 'ci')),
);
test('sink tcp --verify: 40 hostile first bytes, every connection reported, then a good blast', T, async () =>
  ok(await helloSweep(40, 'ci')),
);
