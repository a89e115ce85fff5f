import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinuxOnlyError } from '../../src/errors.js';
import { assertLinux } from '../../src/sys/sys-error.js';

test('off Linux: LinuxOnlyError names the platform and carries exit status 3 (the environment)', () => {
  assert.throws(
    () => assertLinux('sockbuf exporter', 'darwin'),
    (err: unknown) =>
      err instanceof LinuxOnlyError &&
      err.code === 'ERR_SOCKBUF_LINUX_ONLY' &&
      /sockbuf exporter: sockbuf's kernel calls are Linux only \(this is darwin\)/.test(err.message),
  );
  assert.throws(() => assertLinux('x', 'win32'), LinuxOnlyError);
  assert.doesNotThrow(() => assertLinux('x', 'linux'));
});
