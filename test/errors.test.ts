// One error family: every error sockbuf raises is a SockbufError, its code an ERR_SOCKBUF_* code or,
// for a failure the kernel or a peer reported, the errno name (as Node's own system errors).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Interrupted, RunFailure } from '../src/bench/runner.js';
import {
  EnvironmentError,
  LinuxOnlyError,
  PeerError,
  ResolveError,
  SockbufError,
  SysError,
  UsageError,
} from '../src/errors.js';
import { JsonLimitError } from '../src/policy/json.js';
import { ServeRefused } from '../src/serve/client.js';
import { ProtocolError } from '../src/serve/protocol.js';
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
    [new PeerError('not a sockbuf hello (not JSON)'), 'ERR_SOCKBUF_PROTOCOL'],
    [new ProtocolError('bad-json', 'control line is not JSON'), 'ERR_SOCKBUF_PROTOCOL'],
    [new SockbufError('UDP reader thread ended', 'ERR_SOCKBUF_WORKER'), 'ERR_SOCKBUF_WORKER'],
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

test('a ResolveError names the option that carried the name, as a program or the CLI writes it', () => {
  const e = new ResolveError('nowhere.invalid', 'ENOTFOUND', { option: 'to', value: 'nowhere.invalid:5000' });
  assert.deepEqual(
    [e.code, e.host, e.option, e.value],
    ['ENOTFOUND', 'nowhere.invalid', 'to', 'nowhere.invalid:5000'],
  );
  assert.equal(
    e.message,
    "cannot resolve to 'nowhere.invalid:5000': no such host 'nowhere.invalid' (ENOTFOUND)",
  );
  assert.equal(
    e.describe((o) => `--${o}`),
    "cannot resolve --to 'nowhere.invalid:5000': no such host 'nowhere.invalid' (ENOTFOUND)",
  );
  // the message is written once: describe() renders, it does not edit
  assert.match(e.message, /^cannot resolve to /);
  const bare = new ResolveError('nowhere.invalid', 'EAI_AGAIN');
  assert.equal(bare.message, "cannot resolve host 'nowhere.invalid' (EAI_AGAIN)");
  assert.equal(bare.option, undefined);
});

test("the serve protocol's refusals are in the family: code ERR_SOCKBUF_PROTOCOL, the wire word in reason", () => {
  const e = new ProtocolError('busy', 'busy, try again');
  assert.ok(e instanceof PeerError && e instanceof SockbufError);
  assert.deepEqual([e.code, e.reason], ['ERR_SOCKBUF_PROTOCOL', 'busy']);
});
