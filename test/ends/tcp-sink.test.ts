// startTcpSink (the library's `sink tcp`) checks its own options: a bad combination is a UsageError
// naming the option as a program wrote it, before anything listens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/index.js';
import { parseReader, startTcpSink } from '../../src/tools.js';

test('startTcpSink: echo with verify is a UsageError naming echo', async () => {
  await assert.rejects(
    startTcpSink(
      {
        host: '127.0.0.1',
        port: 0,
        reader: parseReader('adaptive'),
        echo: true,
        verify: true,
        once: true,
        intervalSeconds: 1,
      },
      () => {},
    ),
    (err: unknown) =>
      err instanceof UsageError &&
      err.option === 'echo' &&
      /echo and verify cannot be combined/.test(err.message),
  );
});
