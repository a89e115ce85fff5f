// Every option is checked before anything starts (issue 18 item 9): each bad value below exits 2
// naming the option and the value, at once (no end, lab or run started: no "run 1/…" line, well
// under the time a run takes).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from './argv.js';

const CASES: [string[], RegExp][] = [
  [
    ['bench', 'udp', '--size', '23'],
    /--size: '23' \(expected 24 B to 64 KiB: a datagram carries a 24-byte header\)/,
  ],
  [['bench', 'udp', '--size', '0'], /--size: '0'/],
  [['bench', '--only', ''], /--only: ''/],
  [
    ['bench', 'tcp', '--out', '/nonexistent-sockbuf/r.json'],
    /--out: .*the folder \/nonexistent-sockbuf does not exist/,
  ],
  [['bench', 'tcp', '--html', '/nonexistent-sockbuf/r.html'], /--html: .*does not exist/],
  [['bench', '--out', '/nonexistent-sockbuf/r.json'], /--out: .*does not exist/],
  [['bench', '--html', '/nonexistent-sockbuf/r.html'], /--html: .*does not exist/],
  [['bench', 'udp', '--lab', ''], /--lab: ''/],
  [['bench', 'ping', '--sizes', '17M'], /--sizes: '17M' \(expected 1 B to 16 MiB/],
  [['bench', 'ping', '--sizes', '0'], /--sizes: '0'/],
  [['bench', 'tcp', '--policies', 'sndbuf=0'], /--policies: 'sndbuf=0'/],
  [['bench', 'tcp', '--sizes', '1T'], /--sizes: '1T' \(expected 16 B to 16 MiB/],
  [['bench', 'tcp', '--sizes', '0'], /--sizes: '0'/],
  [['bench', 'drain', '--bytes', '0'], /--bytes: '0'/],
  [['bench', 'idle', '--burst', '0'], /--burst: '0'/],
  [['doctor', '--udp-rcvbuf', '0'], /--udp-rcvbuf: '0'/],
  [['lab', 'down', '--id', 'bogus'], /--id: 'bogus'/],
  [
    ['blast', 'udp', '--to', '127.0.0.1:9', '--flows', '2000'],
    /--flows: '2000' \(expected a whole number from 1 to 1024\)/,
  ],
  [['blast', 'udp', '--to', '127.0.0.1:9', '--batch', '0'], /--batch: '0' \(expected a whole number from 1/],
  // createUdpReceiver checks these for the batch receiver, runUdpSink for node:dgram
  [
    ['sink', 'udp', '--listen', '127.0.0.1:0', '--sockets', '65'],
    /--sockets: '65' \(expected a whole number from 1 to 64\)/,
  ],
  [
    ['sink', 'udp', '--listen', '127.0.0.1:0', '--receiver', 'dgram', '--batch', '0'],
    /--batch: '0' \(expected a whole number from 1 to 1024\)/,
  ],
];

for (const [args, message] of CASES) {
  test(`sockbuf ${args.map((a) => a || "''").join(' ')}: exit 2 naming the option, nothing started`, () => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8', timeout: 60_000 });
    const seconds = (performance.now() - t0) / 1000;
    assert.equal(r.status, 2, `exit ${r.status}: ${r.stderr}${r.stdout}`.slice(0, 2000));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr + r.stdout, /run \d+\/|lab \d+:|listening/);
    assert.ok(seconds < 30, `took ${seconds} s`);
  });
}
