import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EnvironmentError, UsageError } from '../../src/errors.js';
import {
  durationMs,
  formatBitRate,
  formatSize,
  parseBitRate,
  parseDuration,
  parseList,
  parsePacketRate,
  parsePercent,
  parseSize,
} from '../../src/policy/units.js';

test('sizes: binary by default and with i, SI with B', () => {
  assert.equal(parseSize('8192'), 8192);
  assert.equal(parseSize('256K'), 262144);
  assert.equal(parseSize('256KiB'), 262144);
  assert.equal(parseSize('2M'), 2 * 1024 * 1024);
  assert.equal(parseSize('2MiB'), 2 * 1024 * 1024);
  assert.equal(parseSize('2KB'), 2000);
  assert.equal(parseSize('2MB'), 2_000_000);
  assert.equal(parseSize('1.5K'), 1536);
  assert.equal(parseSize(4096), 4096);
});

test('rates, datagram rates, durations, percentages, counts, lists', () => {
  assert.equal(parseBitRate('10gbit'), 10e9);
  assert.equal(parseBitRate('500mbit'), 500e6);
  assert.equal(parseBitRate('1.2GB/s'), 9.6e9);
  assert.equal(parsePacketRate('100k'), 100_000);
  assert.equal(parsePacketRate('100kpps'), 100_000);
  assert.equal(parseDuration('250us'), 250e-6);
  assert.equal(parseDuration('2ms'), 0.002);
  assert.equal(parseDuration('1.5s'), 1.5);
  assert.equal(parseDuration('1m'), 60);
  assert.equal(parsePercent('0.1%'), 0.001);
  assert.deepEqual(parseList('64K, 1M', '--sizes', parseSize), [65536, 1048576]);
  assert.equal(formatSize(229376), '224 KiB');
  assert.equal(formatBitRate(917_504_000), '917.5 Mbit/s');
});

test('bad values are UsageErrors (exit 2) naming the option and the value', () => {
  const bad: [() => unknown, RegExp][] = [
    [() => parseSize('lots', '--size'), /--size: 'lots'/],
    [() => parseSize('-1', '--size'), /--size: '-1'/],
    [() => parseSize('1.3', '--size'), /--size: '1.3'/],
    [() => parseBitRate('fast', '--bandwidth'), /--bandwidth: 'fast'/],
    [() => parseBitRate('0gbit', '--bandwidth'), /--bandwidth: '0gbit'/],
    [() => parseDuration('banana', '--rtt'), /--rtt: 'banana'/],
    [() => parseDuration('2', '--rtt'), /--rtt: '2'/],
    [() => parsePacketRate('lots', '--rate'), /--rate: 'lots'/],
    [() => parsePercent('5', '--loss'), /--loss: '5'/],
    [() => parsePercent('101%', '--loss'), /--loss: '101%'/],
    [() => parseList(',', '--sizes', parseSize), /--sizes: ','/],
  ];
  for (const [f, msg] of bad) {
    assert.throws(f, (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.code, 'ERR_SOCKBUF_USAGE');
      assert.match(e.message, msg);
      return true;
    });
  }
});

test('parsePositiveDuration refuses zero, naming the option', async () => {
  const { parsePositiveDuration } = await import('../../src/policy/units.js');
  assert.equal(parsePositiveDuration('250ms', '--interval'), 0.25);
  assert.throws(() => parsePositiveDuration('0s', '--duration'), /--duration: '0s' \(expected more than 0\)/);
});

test('library durations: a plain number is milliseconds, a string carries its unit (as Node takes them)', () => {
  assert.equal(durationMs(1, 'coalesce'), 1);
  assert.equal(durationMs(0, 'warmUp'), 0);
  assert.equal(durationMs('1.5s', 'duration'), 1500);
  assert.equal(durationMs('250us', 'coalesce'), 0.25);
  assert.throws(
    () => durationMs(-1, 'idle'),
    (e: Error) => e instanceof UsageError && /idle: '-1'/.test(e.message),
  );
  assert.throws(() => durationMs(Number.NaN, 'idle'), UsageError);
  assert.throws(() => durationMs('5', 'duration'), /duration: '5'/); // a string needs its unit
});

test('a UsageError carries the option as the caller named it; an EnvironmentError keeps the system code', () => {
  assert.throws(
    () => parseSize('lots', 'rcvbuf'),
    (e: unknown) => e instanceof UsageError && e.option === 'rcvbuf' && /for rcvbuf: 'lots'/.test(e.message),
  );
  assert.equal(new UsageError('a send needs a duration or a count').option, undefined);
  assert.equal(new UsageError('x', 'listen').option, 'listen');
  const cause = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', syscall: 'listen' });
  const e = new EnvironmentError('port in use', { cause });
  assert.equal(e.code, 'EADDRINUSE');
  assert.equal(e.syscall, 'listen');
  assert.equal(e.cause, cause);
  assert.equal(new EnvironmentError('not root').code, 'ERR_SOCKBUF_ENVIRONMENT');
});
