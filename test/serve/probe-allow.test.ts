// /probe's allow-list: entries parsed strictly, IPv4 and IPv6 ranges, a name's every address checked,
// the address to connect to is one that was checked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { checkTarget, inNets, judgeTarget, parseProbeAllow } from '../../src/serve/probe-allow.js';

test('parseProbeAllow: addresses, CIDR ranges (IPv4, IPv6, bracketed) and names', () => {
  const l = parseProbeAllow('10.0.0.0/8, 192.0.2.7,[::1],fd00::/8,[2001:db8::]/32,Iperf-1.Example.');
  assert.deepEqual(l.names, ['iperf-1.example']);
  for (const a of ['10.1.2.3', '192.0.2.7', '::1', 'fd12::5', '2001:db8:1::9', '::ffff:10.9.9.9'])
    assert.equal(inNets(l, a), true, a);
  for (const a of ['11.0.0.1', '192.0.2.8', '::2', 'fe80::1', '2001:db9::1', '::ffff:11.0.0.1', '127.0.0.1'])
    assert.equal(inNets(l, a), false, a);
  // an IPv4-mapped entry matches the plain IPv4 address
  assert.equal(inNets(parseProbeAllow('::ffff:127.0.0.1'), '127.0.0.1'), true);
  assert.equal(inNets(parseProbeAllow(['0.0.0.0/0']), '203.0.113.1'), true);
});

test('parseProbeAllow: an entry that is no address, range or name is a UsageError naming the option', () => {
  for (const bad of [
    '',
    ',',
    '10.0.0.0/33',
    'fd00::/129',
    '10.0.0.0/x',
    'host/8',
    '1.2.3.4.5',
    'a b',
    '10.0.0.1:5201',
    '*',
  ])
    assert.throws(
      () => parseProbeAllow(bad, 'allow'),
      (e: unknown) =>
        e instanceof UsageError && e.option === 'allow' && /invalid value for allow: /.test(e.message),
      bad,
    );
});

test('judgeTarget: every address of a name must be allowed; the first is the one probed', () => {
  const l = parseProbeAllow('127.0.0.0/8,fd00::/8,iperf.example');
  assert.deepEqual(judgeTarget(l, 'multi.example', ['127.0.0.2', 'fd00::2']), {
    allowed: true,
    address: '127.0.0.2',
    addresses: ['127.0.0.2', 'fd00::2'],
  });
  // one address outside is enough to refuse the name, whichever comes first
  const v = judgeTarget(l, 'multi.example', ['127.0.0.2', '10.0.0.5', '169.254.169.254']);
  assert.equal(v.allowed, false);
  assert.match(
    (v as { reason: string }).reason,
    /^multi\.example resolves to 10\.0\.0\.5, 169\.254\.169\.254, which are not in the allow-list/,
  );
  assert.match(
    (judgeTarget(l, '10.0.0.5', ['10.0.0.5']) as { reason: string }).reason,
    /^10\.0\.0\.5 is not in/,
  );
  // an address outside the ranges is allowed when a listed name resolves to it
  assert.equal(judgeTarget(l, 'iperf.example', ['198.51.100.4'], ['198.51.100.4']).allowed, true);
  assert.equal(judgeTarget(l, 'other.example', ['198.51.100.5'], ['198.51.100.4']).allowed, false);
  assert.equal(judgeTarget(l, 'empty.example', []).allowed, false);
});

test('checkTarget resolves names with the system resolver: localhost, a listed name, one that does not resolve', async () => {
  const loop = parseProbeAllow('127.0.0.0/8,::1');
  const lh = await checkTarget(loop, 'localhost');
  assert.equal(lh.allowed, true);
  assert.match((lh as { address: string }).address, /^(127\.|::1$)/);
  assert.deepEqual(await checkTarget(loop, '127.0.0.1'), {
    allowed: true,
    address: '127.0.0.1',
    addresses: ['127.0.0.1'],
  });
  const outside = await checkTarget(parseProbeAllow('10.0.0.0/8'), 'localhost');
  assert.equal(outside.allowed, false);
  assert.match((outside as { reason: string }).reason, /^localhost resolves to .* not in the allow-list$/);
  // localhost allowed by name: its addresses come from resolving the listed name
  assert.equal((await checkTarget(parseProbeAllow('10.0.0.0/8,localhost'), '127.0.0.1')).allowed, true);
  const none = await checkTarget(loop, 'no-such-host.invalid');
  assert.equal(none.allowed, false);
  assert.match((none as { reason: string }).reason, /^no-such-host\.invalid does not resolve \(E[A-Z]+\)/);
});
