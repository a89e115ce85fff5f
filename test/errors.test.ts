import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EnvironmentError, LinuxOnlyError, ResolveError, SysError, UsageError } from '../src/errors.js';

test('UsageError carries the option, the value and what was expected as fields, and names the option as told', () => {
  const e = UsageError.invalid('warmUp', '-1s', 'a duration such as 2ms');
  assert.equal(e.option, 'warmUp');
  assert.deepEqual(e.options, ['warmUp']);
  assert.equal(e.value, '-1s');
  assert.equal(e.expected, 'a duration such as 2ms');
  assert.equal(e.code, 'ERR_SOCKBUF_USAGE');
  assert.equal(e.exitCode, 2);
  assert.equal(e.message, "invalid value for warmUp: '-1s' (expected a duration such as 2ms)");
  // the CLI names its flags: nothing is parsed out of the message
  const flag = (o: string) => `--${o.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  assert.equal(e.describe(flag), "invalid value for --warm-up: '-1s' (expected a duration such as 2ms)");
  // a value that reads like an option name is not mistaken for one
  assert.equal(
    UsageError.invalid('size', 'size', 'a size').describe(flag),
    "invalid value for --size: 'size' (expected a size)",
  );
  const c = UsageError.conflict('echo', 'verify');
  assert.deepEqual(c.options, ['echo', 'verify']);
  assert.equal(c.describe(flag), '--echo and --verify cannot be combined');
  assert.equal(UsageError.either('bytes', 'seconds').describe(flag), 'give --bytes or --seconds, not both');
  // a plain message names no option
  const plain = new UsageError('no results documents given');
  assert.equal(plain.option, undefined);
  assert.equal(plain.describe(flag), 'no results documents given');
});

test('the other classes keep their codes and exit codes', () => {
  const cause = Object.assign(new Error('x'), { code: 'EADDRINUSE', syscall: 'bind' });
  const env = new EnvironmentError('port in use', { cause });
  assert.deepEqual([env.exitCode, env.code, env.syscall], [3, 'EADDRINUSE', 'bind']);
  const r = new ResolveError('nowhere.invalid', 'ENOTFOUND');
  assert.ok(r instanceof EnvironmentError);
  assert.deepEqual([r.host, r.code, r.exitCode], ['nowhere.invalid', 'ENOTFOUND', 3]);
  const s = new SysError('setsockopt', 22, 'SO_RCVBUF');
  assert.deepEqual([s.code, s.errno, s.syscall], ['EINVAL', 22, 'setsockopt']);
  assert.equal(new LinuxOnlyError('recvmmsg', 'darwin').exitCode, 3);
});
