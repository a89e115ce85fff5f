// runTcpBlast (the library's `blast tcp`) checks its own options: a bad combination is a UsageError
// naming the option as a program wrote it, before any stream connects (port 1: nothing listens).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runTcpBlast, UsageError } from '../../src/index.js';

const base = { host: '127.0.0.1', port: 1, size: 4096, parallel: 1, reverse: false, intervalSeconds: 1 };

test('runTcpBlast: bytes with seconds is a UsageError naming bytes', async () => {
  await assert.rejects(
    runTcpBlast({ ...base, bytes: 1024, seconds: 1 }, () => {}),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'bytes' &&
      /give bytes or seconds, not both/.test(err.message),
  );
});

test('runTcpBlast: raw with reverse is a UsageError naming raw', async () => {
  await assert.rejects(
    runTcpBlast({ ...base, raw: true, reverse: true }, () => {}),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'raw' &&
      /raw and reverse cannot be combined/.test(err.message),
  );
});

test('runTcpBlast: parallel outside 1 to 128 is a UsageError naming parallel', async () => {
  for (const parallel of [0, 129, 1.5]) {
    await assert.rejects(
      runTcpBlast({ ...base, parallel }, () => {}),
      (err: unknown) => err instanceof UsageError && err.option === 'parallel',
      String(parallel),
    );
  }
});
