// One error family: every error sockbuf raises is a SockbufError, its code an ERR_SOCKBUF_* code or,
// for a failure the kernel or a peer reported, the errno name (as Node's own system errors).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Interrupted, RunFailure } from '../src/bench/runner.js';
import {
  EnvironmentError,
  LinuxOnlyError,
  ResolveError,
  SockbufError,
  SysError,
  UsageError,
} from '../src/errors.js';
import { JsonLimitError } from '../src/policy/json.js';
import { ServeRefused } from '../src/serve/client.js';
import { CommandError } from '../src/sys/process.js';
import { FrameError } from '../src/tcp/frame.js';
import { UdpSendError } from '../src/udp/sender-options.js';

test('every error class is a SockbufError with a code in the one scheme', () => {
  const own: [SockbufError, string][] = [
    [new UsageError('x', 'size'), 'ERR_SOCKBUF_USAGE'],
    [new EnvironmentError('not root'), 'ERR_SOCKBUF_ENVIRONMENT'],
    [new LinuxOnlyError('recvmmsg', 'darwin'), 'ERR_SOCKBUF_LINUX_ONLY'],
    [new FrameError(10, 4), 'ERR_SOCKBUF_FRAME_TOO_BIG'],
    [new JsonLimitError('too long', 'too-long'), 'ERR_SOCKBUF_JSON_LIMIT'],
    [new RunFailure('the sink failed', 'receiver'), 'ERR_SOCKBUF_RUN_FAILED'],
    [new Interrupted('SIGINT'), 'ERR_SOCKBUF_INTERRUPTED'],
    [new CommandError('ip', 2, 'bad'), 'ERR_SOCKBUF_COMMAND_FAILED'],
    [new ServeRefused({ type: 'error', code: 'busy', message: 'busy' }), 'ERR_SOCKBUF_SERVE_REFUSED'],
  ];
  for (const [e, code] of own) {
    assert.ok(e instanceof SockbufError && e instanceof Error, e.name);
    assert.equal(e.code, code, e.name);
  }
  // the kernel's and a peer's failures keep their errno name, with errno and syscall
  const sys = new SysError('bind', 98);
  assert.deepEqual(
    [sys instanceof SockbufError, sys.code, sys.errno, sys.syscall],
    [true, 'EADDRINUSE', 98, 'bind'],
  );
  const send = new UdpSendError(111, 0, 1, 0);
  assert.deepEqual(
    [send instanceof SockbufError, send.code, send.errno, send.syscall],
    [true, 'ECONNREFUSED', 111, 'sendmmsg'],
  );
  const resolve = new ResolveError('nowhere.invalid', 'ENOTFOUND');
  assert.deepEqual(
    [resolve instanceof EnvironmentError, resolve.code, resolve.host],
    [true, 'ENOTFOUND', 'nowhere.invalid'],
  );
});
