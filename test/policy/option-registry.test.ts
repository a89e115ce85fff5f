// The option registry (src/policy/option-registry.ts): one whole-number reader, each option's range checked the
// same way by the library, the CLI and serve's wire.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import {
  checkOption,
  checkWhole,
  expected,
  OPTIONS,
  optionOnWire,
  parseWhole,
  wholeNumber,
} from '../../src/policy/option-registry.js';
import { checkParam } from '../../src/serve/request.js';

test('wholeNumber: a safe integer, or decimal digits with blanks around; anything else NaN', () => {
  assert.equal(wholeNumber(8), 8);
  assert.equal(wholeNumber(' 42 '), 42);
  for (const bad of [
    1.5,
    -0.5,
    '1e2',
    '0x10',
    '',
    '-1',
    '+1',
    'many',
    null,
    undefined,
    '9'.repeat(400),
    2 ** 60,
  ])
    assert.ok(Number.isNaN(wholeNumber(bad)), String(bad));
});

test('checkWhole: a whole number within the declared range, as a number or a string; else a UsageError naming the option', () => {
  assert.equal(checkWhole('parallel', 128), 128);
  assert.equal(checkWhole('batch', '64'), 64);
  for (const bad of [0, -1, '-1', 129, 1.5, Number.NaN, '1e2', '0x10', '', 'many', null]) {
    assert.throws(
      () => checkWhole('parallel', bad, '--parallel'),
      (err: unknown) =>
        err instanceof UsageError &&
        err.option === '--parallel' &&
        err.expected === 'a whole number from 1 to 128' &&
        err.message ===
          `invalid value for --parallel: '${String(bad)}' (expected a whole number from 1 to 128)`,
    );
  }
  assert.throws(() => parseWhole('0', '--x', 1, Number.MAX_SAFE_INTEGER), /expected a whole number from 1\)/);
});

test('every declaration is whole: a flag, a doc line, a range that holds its default, choices that hold theirs', () => {
  for (const [name, d] of Object.entries(OPTIONS) as [string, Record<string, unknown>][]) {
    assert.match(String(d.flag), /^--[a-z][a-z0-9-]*$/, name);
    assert.ok(String(d.doc).length > 5, name);
    if (d.kind === 'count') {
      assert.ok(Number.isSafeInteger(d.min) && Number.isSafeInteger(d.max), name);
      if (d.default !== undefined) assert.equal(checkWhole(name as never, d.default), d.default, name);
    }
    if (d.kind === 'choice' && d.default !== undefined)
      assert.ok((d.choices as string[]).includes(String(d.default)), name);
    if (['size', 'duration', 'bitRate'].includes(String(d.kind))) {
      assert.ok(d.unit, `${name}: the unit the library takes`);
      // the default, as written, is within the range
      if (d.default !== undefined) assert.ok(Number.isFinite(checkOption(name as never, d.default)), name);
    }
  }
});

test('checkOption: a size, duration or bit rate as written or as a number in the declared unit, within the range', () => {
  assert.equal(checkOption('rtt', '2ms'), 2, 'doctor takes milliseconds');
  assert.equal(checkOption('rtt', 2), 2);
  assert.equal(checkOption('duration', '1.5s'), 1.5, 'runTcpBlast takes seconds');
  assert.equal(checkOption('udpRcvbuf', '8M'), 8 * 1024 * 1024);
  assert.equal(checkOption('bandwidth', '10gbit'), 1e10);
  for (const [option, bad, words] of [
    ['rtt', '0ms', 'a duration from 1 µs to 60 s'],
    ['rtt', 60_001, 'a duration from 1 µs to 60 s'],
    ['interval', '5ms', 'a duration from 10 ms to 1 h'],
    ['maxDuration', '25h', 'a duration more than 0 and at most 24 h'],
    ['blastSize', 65_508, 'a size from 1 B to 65507 B'],
    ['udpRcvbuf', '2GiB', 'a size from 1 B to 2 GiB'],
    ['maxBytes', 1.5, 'a size from 1 B to 1024 TiB'],
    ['bandwidth', '20tbit', 'a bit rate more than 0 and at most 10 Tbit/s'],
  ] as const)
    assert.throws(
      () => checkOption(option, bad),
      (e: unknown) =>
        e instanceof UsageError && e.option === option && e.message.endsWith(`(expected ${words})`),
      `${option} ${bad}`,
    );
  assert.equal(expected('sockets'), 'a whole number from 1 to 64');
  assert.equal(expected('onFull'), 'one of drop, wait');
});

test("serve's wire bounds a whole-number parameter by the same declared range as the library", () => {
  const limits = { maxDurationSeconds: 60, maxBytes: 1e9 };
  for (const wire of ['parallel', 'inflight', 'sockets', 'batch', 'flows']) {
    const name = optionOnWire(wire);
    assert.ok(name, wire);
    const { max } = OPTIONS[name as 'parallel'];
    assert.equal(checkParam(wire, 'whole', max, limits, 65507), max);
    assert.throws(() => checkParam(wire, 'whole', max + 1, limits, 65507), new RegExp(`to ${max}`));
    assert.throws(() => checkParam(wire, 'whole', String(max + 1), limits, 65507), new RegExp(`to ${max}`));
    assert.throws(() => checkWhole(name as 'parallel', max + 1), UsageError);
  }
  assert.throws(() => checkParam('nosuch', 'whole', 1, limits, 65507), /a known parameter/);
});
