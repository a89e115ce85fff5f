// Plausibility limits (issue 44, item 7): every duration, rate and size option has a bound in the
// option registry that a user could mean, and a test end's target is one host, never a broadcast or
// multicast group. Each refusal names the option and shows the value, exit 2; nothing runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { parseSendRate } from '../../src/ends/udp-blast-options.js';
import { UsageError } from '../../src/errors.js';
import { groupAddress, parseUnicastTo } from '../../src/policy/address.js';
import { checkOption, OPTIONS, type OptionDecl } from '../../src/policy/option-registry.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';

test('every size, duration and bit-rate option is bounded above in the registry', () => {
  const unbounded = Object.entries(OPTIONS as Record<string, OptionDecl>)
    .filter(([, d]) => ['size', 'duration', 'bitRate', 'rate'].includes(d.kind))
    // frameSize is bounded by the frame codec, checked by runTcpBlast
    .filter(([name, d]) => d.max === undefined && name !== 'frameSize')
    .map(([name]) => name);
  assert.deepEqual(unbounded, []);
});

test('the bounds a user could mean: warm-up ≤ 1 h, rates ≤ 10 Tbit/s, rtt ≥ 1 µs, idle > 0', () => {
  assert.throws(() => checkOption('warmUp', '99999h', '--warm-up'), /'99999h'.*at most 1 h|from 0 to 1 h/);
  assert.equal(checkOption('warmUp', '1h'), 3_600_000);
  assert.throws(() => checkOption('rtt', '1ns'), /'1ns'.*1 µs/);
  assert.equal(checkOption('rtt', '1us'), 0.001);
  assert.throws(() => checkOption('idle', '0s'), /'0s'/);
  assert.equal(checkOption('idle', '2s'), 2000);
  assert.throws(() => checkOption('labBandwidth', '99999tbit'), /'99999tbit'/);
  assert.throws(
    () => parseSendRate('99999tbit', 64),
    (e: unknown) => e instanceof UsageError && /'99999tbit'.*10 Tbit\/s/.test(e.message),
  );
  // a datagram rate is bounded as the payload bit rate it makes: 10 Tbit/s of 1000-byte datagrams
  assert.equal(parseSendRate('1g', 1000), 1e9);
  assert.throws(() => parseSendRate('2g', 1000), UsageError);
  assert.throws(() => parseSendRate(1e12, 1000), UsageError);
  assert.equal(parseSendRate('max', 64), Number.POSITIVE_INFINITY);
});

// lab --rtt took 1 ns (min 0 meant "no delay line") and showed "rtt 0 µs"; blast udp --sndbuf was parsed
// outside the registry: 0 was taken, 3G ended in Node's raw RangeError.
test('lab --rtt: 0 (no delay line) or at least 1 µs; a UDP send buffer is 1 B to 2 GiB', () => {
  assert.throws(
    () => checkOption('labRtt', '1ns', '--rtt'),
    (e: unknown) =>
      e instanceof UsageError &&
      /'1ns' \(expected 0 \(no delay line\) or a duration from 1 µs/.test(e.message),
  );
  assert.throws(() => checkOption('labRtt', '500ns'), UsageError);
  assert.equal(checkOption('labRtt', 0), 0);
  assert.equal(checkOption('labRtt', '0ms'), 0);
  assert.equal(checkOption('labRtt', '1us'), 0.001);
  assert.equal(checkOption('labRtt', 2), 2);
  assert.throws(() => checkOption('labRtt', '11s'), UsageError);
  assert.throws(() => checkOption('udpSndbuf', '3G', 'sndbuf'), /'3G'.*1 B to 2 GiB|'3G'.*from 1 B/);
  assert.throws(() => checkOption('udpSndbuf', 0, 'sndbuf'), UsageError);
  assert.equal(checkOption('udpSndbuf', '256K'), 262144);
  // a registry field, not a special case: no other option takes 0 below its least value
  const zeroes = Object.entries(OPTIONS as Record<string, OptionDecl>).filter(
    ([, d]) => d.zero !== undefined,
  );
  assert.deepEqual(
    zeroes.map(([n]) => n),
    ['labRtt'],
  );
});

test('a broadcast or multicast target is refused naming the option', () => {
  assert.equal(groupAddress('255.255.255.255'), 'broadcast');
  assert.equal(groupAddress('224.0.0.1'), 'multicast');
  assert.equal(groupAddress('239.255.255.250'), 'multicast');
  assert.equal(groupAddress('::ffff:239.1.2.3'), 'multicast');
  assert.equal(groupAddress('ff02::1'), 'multicast');
  assert.equal(groupAddress('FF05::1:3'), 'multicast');
  for (const unicast of [
    '127.0.0.1',
    '10.201.0.2',
    '223.255.255.255',
    '240.0.0.1',
    '::1',
    'fe80::1',
    'localhost',
  ])
    assert.equal(groupAddress(unicast), undefined, unicast);
  assert.throws(
    () => parseUnicastTo('255.255.255.255:9', 'to'),
    (e: unknown) =>
      e instanceof UsageError && e.option === 'to' && /'255\.255\.255\.255:9'.*broadcast/.test(e.message),
  );
  assert.throws(() => parseUnicastTo({ host: 'ff02::1', port: 9 }), /multicast/);
  assert.deepEqual(parseUnicastTo('127.0.0.1:9'), { host: '127.0.0.1', port: 9 });
});

const CLI: { argv: string[]; flag: string; value: string }[] = [
  { argv: ['sink', 'udp', '--listen', '0', '--warm-up', '99999h'], flag: '--warm-up', value: '99999h' },
  { argv: ['sink', 'udp', '--listen', '0', '--idle', '0s'], flag: '--idle', value: '0s' },
  {
    argv: ['blast', 'udp', '--to', '127.0.0.1:9', '--rate', '99999tbit'],
    flag: '--rate',
    value: '99999tbit',
  },
  { argv: ['doctor', '--rtt', '1ns'], flag: '--rtt', value: '1ns' },
  // refused while parsing, before any lab is made (root or not); `lab -- CMD`, never `lab up`: had the
  // check gone, lab -- CMD still takes its own lab down when doctor ends, lab up would leave one held
  { argv: ['lab', '--rtt', '1ns', '--', 'doctor'], flag: '--rtt', value: '1ns' },
  { argv: ['blast', 'udp', '--to', '127.0.0.1:9', '--sndbuf', '3G'], flag: '--sndbuf', value: '3G' },
  { argv: ['blast', 'udp', '--to', '127.0.0.1:9', '--sndbuf', '0'], flag: '--sndbuf', value: '0' },
  {
    argv: ['blast', 'udp', '--to', '255.255.255.255:9', '--duration', '1s'],
    flag: '--to',
    value: '255.255.255.255:9',
  },
  {
    argv: ['blast', 'tcp', '--to', '239.1.2.3:5201', '--duration', '1s'],
    flag: '--to',
    value: '239.1.2.3:5201',
  },
];

for (const c of CLI) {
  test(`sockbuf ${c.argv.join(' ')}: exit 2 naming ${c.flag} and the value`, { timeout: 60_000 }, () => {
    const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, ...c.argv], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 2, `${r.stdout}${r.stderr}`);
    assert.ok(r.stderr.includes(`${c.flag}: '${c.value}'`), r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });
}
