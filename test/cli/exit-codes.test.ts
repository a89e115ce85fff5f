// The CLI alone turns errors into exit statuses: 2 bad usage, 3 the environment, 1 the rest, an end's
// 2 or 3 passed on, a signal 128 + its number, a serve refusal by its reason.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CommanderError } from 'commander';
import { Interrupted, RunFailure } from '../../src/bench/runner.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import {
  EnvironmentError,
  LinuxOnlyError,
  PeerError,
  ResolveError,
  SockbufError,
  SysError,
  UsageError,
} from '../../src/errors.js';
import { ServeRefused } from '../../src/serve/client.js';

test('each error maps to its exit status in one table', () => {
  const cases: [unknown, number][] = [
    [new UsageError('x', 'size'), 2],
    [new CommanderError(1, 'commander.unknownOption', 'x'), 2],
    [new EnvironmentError('not root'), 3],
    [new EnvironmentError('port in use', { cause: new SysError('bind', 98) }), 3],
    [new ResolveError('nowhere.invalid', 'ENOTFOUND', { option: 'to' }), 3],
    [new LinuxOnlyError('recvmmsg', 'darwin'), 3],
    [new SysError('bind', 22), 1],
    [new PeerError('not a sockbuf hello'), 1],
    [new SockbufError('reader thread ended', 'ERR_SOCKBUF_WORKER'), 1],
    [new RunFailure('timed out', undefined), 1],
    [new RunFailure('the receiver exited with code 3', 'receiver', 3), 3],
    [new RunFailure('the sender exited with code 2', 'sender', 2), 2],
    [new RunFailure('the sender was killed', 'sender', 139), 1],
    [new Interrupted('SIGINT'), 130],
    [new Interrupted('SIGTERM'), 143],
    [new ServeRefused({ type: 'error', code: 'refused', message: 'x' }), 2],
    [new ServeRefused({ type: 'error', code: 'busy', message: 'x' }), 3],
    [new Error('a bug'), 1],
  ];
  for (const [err, status] of cases) assert.equal(exitCodeFor(err), status, String(err));
});
