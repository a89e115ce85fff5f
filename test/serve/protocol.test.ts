import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration } from '../../src/policy/units.js';
import {
  encodeMessage,
  LineDecoder,
  MAX_LINE_BYTES,
  ProtocolError,
  parseReply,
} from '../../src/serve/protocol.js';
import { farArgs, parseRequest, requestFromArgs, tokenMatches } from '../../src/serve/request.js';

const limits = { maxDurationSeconds: 60, maxBytes: 1 << 30 };
const req = (o: object) => JSON.stringify({ v: 1, ...o });

function refusedWith(line: string, code: string, message: RegExp, token?: string) {
  assert.throws(
    () => parseRequest(line, limits, token),
    (e: unknown) => e instanceof ProtocolError && e.reason === code && message.test(e.message),
  );
}

test('a valid tcp test request: parameters checked, far-end options derived', () => {
  const r = parseRequest(
    req({
      type: 'test',
      kind: 'tcp',
      params: { reader: 'adaptive:max=256K', rcvbuf: 'auto', duration: '10s', size: '16K', verify: true },
    }),
    limits,
  );
  assert.equal(r.type, 'test');
  if (r.type !== 'test') return;
  assert.equal(r.kind, 'tcp');
  assert.equal(r.durationSeconds, 10);
  assert.deepEqual(farArgs(r), ['--reader', 'adaptive:max=256K', '--rcvbuf', 'auto', '--verify']);
});

test('hello and done need nothing else', () => {
  assert.deepEqual(parseRequest(req({ type: 'hello' }), limits), { type: 'hello' });
  assert.deepEqual(parseRequest(req({ type: 'done' }), limits), { type: 'done', now: false });
  assert.deepEqual(parseRequest(req({ type: 'done', now: true }), limits), { type: 'done', now: true });
});

test('hostile lines are refused with a message naming what is wrong', () => {
  refusedWith('not json at all', 'bad-json', /not JSON/);
  refusedWith('[1,2]', 'bad-request', /not a JSON object/);
  refusedWith(JSON.stringify({ v: 2, type: 'hello' }), 'version', /unknown protocol version 2/);
  refusedWith(JSON.stringify({ type: 'hello' }), 'version', /version undefined/);
  refusedWith(req({ type: 'shell' }), 'bad-request', /unknown message type "shell"/);
  refusedWith(req({ type: 'test', kind: 'exec' }), 'refused', /unknown test kind "exec"/);
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { duration: 1e9 } }),
    'refused',
    /duration: 1000000000 is longer than this server allows \(60 s\)/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { duration: '1000000000s' } }),
    'refused',
    /longer than this server allows/,
  );
  refusedWith(req({ type: 'udp', kind: 'udp' }), 'bad-request', /unknown message type/);
  refusedWith(
    req({ type: 'test', kind: 'udp', params: { rate: -1 } }),
    'refused',
    /rate: -1 is not a positive rate/,
  );
  refusedWith(req({ type: 'test', kind: 'udp', params: { rate: '-1' } }), 'refused', /rate/);
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { size: '10GiB' } }),
    'refused',
    /size: '10GiB' is more than this server allows/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { bytes: '10GiB' } }),
    'refused',
    /bytes: '10GiB' is more than this server allows \(1073741824 bytes\)/,
  );
  refusedWith(
    req({ type: 'test', kind: 'udp', params: { size: 65508 } }),
    'refused',
    /more than this server allows \(65507/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { listen: '0.0.0.0:22' } }),
    'refused',
    /unknown parameter "listen"/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { reader: '--exec=x' } }),
    'refused',
    /reader: '--exec=x' is not a word/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { reader: { a: 1 } } }),
    'refused',
    /not a string or a number/,
  );
  refusedWith(req({ type: 'test', kind: 'tcp', params: { parallel: 1e6 } }), 'refused', /1 to 128/);
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { interval: '1us' } }),
    'refused',
    /from 10 ms to 1 h/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { duration: 'banana' } }),
    'refused',
    /duration: 'banana'/,
  );
  refusedWith(
    '{"v":1,"type":"test","kind":"tcp","params":{"__proto__":{"reader":1}}}',
    'refused',
    /unknown parameter "__proto__"/,
  );
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { constructor: 2 } }),
    'refused',
    /unknown parameter "constructor"/,
  );
  refusedWith(req({ type: 'test', kind: 'tcp', params: [] }), 'bad-request', /params must be a JSON object/);
  refusedWith('x'.repeat(MAX_LINE_BYTES + 1), 'too-long', /longer than 65536 bytes/);
});

test("the far end's command line is built from the values serve validated, in the ranges the far end takes", () => {
  const far = (kind: string, params: Record<string, unknown>) => {
    const r = parseRequest(req({ type: 'test', kind, params }), limits);
    assert.equal(r.type, 'test');
    return r.type === 'test' ? farArgs(r) : [];
  };
  // a bare number of seconds: the far end requires a unit, so it gets one
  assert.deepEqual(far('udp', { duration: 5 }), ['--duration', '5000ms']);
  assert.equal(parseDuration('5000ms'), 5);
  assert.deepEqual(far('udp', { idle: '1.5s', coalesce: '250us' }), [
    '--idle',
    '1500ms',
    '--coalesce',
    '0.25ms',
  ]);
  assert.equal(parseDuration('0.25ms'), 0.00025);
  // sizes as whole bytes, counts as whole numbers
  assert.deepEqual(far('udp', { rcvbuf: '8MiB', batch: 64.0 }), ['--rcvbuf', '8388608', '--batch', '64']);
  // a word is never a bare option (it would swallow the next one)
  refusedWith(req({ type: 'test', kind: 'tcp', params: { reader: true } }), 'refused', /reader: true is not/);
  refusedWith(req({ type: 'test', kind: 'udp', params: { receiver: true } }), 'refused', /receiver/);
  refusedWith(req({ type: 'test', kind: 'udp', params: { receiver: 'exec' } }), 'refused', /batch, dgram/);
  refusedWith(req({ type: 'test', kind: 'udp', params: { 'on-full': 'x' } }), 'refused', /drop, wait/);
  assert.deepEqual(far('udp', { gro: true }), ['--gro']);
  // sink udp takes at most 64 sockets, blast at most 128 streams
  refusedWith(
    req({ type: 'test', kind: 'udp', params: { sockets: 1024 } }),
    'refused',
    /sockets: 1024 .*1 to 64/,
  );
  refusedWith(req({ type: 'test', kind: 'udp', params: { sockets: '65' } }), 'refused', /sockets/);
  assert.deepEqual(far('udp', { sockets: 64 }), ['--sockets', '64']);
  // bench tcp/ping --write-hwms pass --write-hwm to the receiver: serve takes it, as bytes
  const hwm = requestFromArgs(['sink', 'tcp', '--echo', '--once', '--write-hwm', '64K']);
  const hr = parseRequest(JSON.stringify({ v: 1, type: 'test', ...hwm }), limits);
  assert.ok(hr.type === 'test' && farArgs(hr).join(' ') === '--write-hwm 65536');
  assert.deepEqual(far('tcp', { 'write-hwm': '1M' }), ['--write-hwm', '1048576']);
  refusedWith(req({ type: 'test', kind: 'tcp', params: { parallel: 129 } }), 'refused', /1 to 128/);
});

test('the token, when set, is required and compared in full', () => {
  const line = (token?: unknown) => req({ type: 'test', kind: 'tcp', token, params: {} });
  refusedWith(line(), 'unauthorized', /token is required/, 's3cret');
  refusedWith(line('s3cre'), 'unauthorized', /token/, 's3cret');
  refusedWith(line(['s3cret']), 'unauthorized', /token/, 's3cret');
  assert.equal(parseRequest(line('s3cret'), limits, 's3cret').type, 'test');
  assert.equal(tokenMatches('a', 'a'), true);
  assert.equal(tokenMatches('a', 'b'), false);
});

test('LineDecoder: lines across chunks, CRLF, blank lines skipped', () => {
  const d = new LineDecoder(16);
  assert.deepEqual(d.push(Buffer.from('ab')), []);
  assert.deepEqual(d.push(Buffer.from('c\r\n\nde\nf')), ['abc', 'de']);
  assert.equal(d.pending, 1);
  assert.deepEqual(d.push(Buffer.from('g\n')), ['fg']);
});

test('LineDecoder: an over-cap line throws once the cap is passed, never buffering more', () => {
  const d = new LineDecoder(16);
  d.push(Buffer.from('x'.repeat(16)));
  assert.throws(
    () => d.push(Buffer.from('y')),
    (e: unknown) => e instanceof ProtocolError && e.reason === 'too-long',
  );
  assert.equal(d.pending, 0);
  assert.throws(() => new LineDecoder(16).push(Buffer.from(`${'z'.repeat(17)}\n`)), /longer than 16 bytes/);
  assert.deepEqual(new LineDecoder(16).push(Buffer.from(`${'z'.repeat(16)}\n`)), ['z'.repeat(16)]);
});

test('replies: encoded with the version, parsed back; strange replies refused', () => {
  const line = encodeMessage({ type: 'ready', kind: 'tcp', port: 40000 });
  assert.ok(line.endsWith('\n'));
  assert.deepEqual(parseReply(line), { v: 1, type: 'ready', kind: 'tcp', port: 40000 });
  assert.throws(() => parseReply('{"v":1,"type":"ready","port":70000}'), ProtocolError);
  assert.throws(() => parseReply('{"v":9,"type":"hello"}'), /protocol 9/);
  assert.throws(() => parseReply('nope'), /not JSON/);
  assert.throws(() => encodeMessage({ type: 'error', message: 'x'.repeat(MAX_LINE_BYTES) }), /too long/);
});

test('requestFromArgs: a far end command line becomes a request the server accepts', () => {
  const r = requestFromArgs([
    'sink',
    'tcp',
    '--listen',
    '10.0.0.2:0',
    '--reader',
    'adaptive:max=256K',
    '--verify',
    '--json',
    '--once',
  ]);
  assert.deepEqual(r, { kind: 'tcp', params: { reader: 'adaptive:max=256K', verify: true } });
  const u = requestFromArgs(['sink', 'udp', '--listen={host}:0', '--rcvbuf=8MiB', '--idle', '1s']);
  assert.deepEqual(u, { kind: 'udp', params: { rcvbuf: '8MiB', idle: '1s' } });
  const parsed = parseRequest(JSON.stringify({ v: 1, type: 'test', ...u }), limits);
  assert.equal(parsed.type, 'test');
  assert.throws(
    () => requestFromArgs(['blast', 'tcp', '--to', 'x']),
    /runs sink tcp \[--echo\] and sink udp/,
  );
  assert.throws(
    () => requestFromArgs(['sink', 'tcp', '--exec', 'x']),
    /--exec of the far end is not one serve passes on/,
  );
});

test('ping: sink tcp --echo is its far end; its own parameters, capped; no --verify', () => {
  const p = requestFromArgs([
    'sink',
    'tcp',
    '--echo',
    '--once',
    '--listen',
    '{host}:0',
    '--json',
    '--rcvbuf',
    '65535',
    '--sndbuf',
    'auto',
  ]);
  assert.deepEqual(p, { kind: 'ping', params: { rcvbuf: '65535', sndbuf: 'auto' } });
  const r = parseRequest(JSON.stringify({ v: 1, type: 'test', ...p }), limits);
  assert.equal(r.type, 'test');
  if (r.type === 'test') assert.deepEqual(farArgs(r), ['--rcvbuf', '65535', '--sndbuf', 'auto']);
  refusedWith(
    req({ type: 'test', kind: 'ping', params: { size: '32MiB' } }),
    'refused',
    /size: '32MiB' is more than this server allows \(16777216 bytes\)/,
  );
  refusedWith(
    req({ type: 'test', kind: 'ping', params: { verify: true } }),
    'refused',
    /unknown parameter "verify" for a ping test/,
  );
  refusedWith(req({ type: 'test', kind: 'ping', params: { sndbuf: '2GiB' } }), 'refused', /sndbuf/);
  refusedWith(
    req({ type: 'test', kind: 'tcp', params: { echo: true } }),
    'refused',
    /unknown parameter "echo"/,
  );
  assert.throws(
    () => requestFromArgs(['sink', 'tcp', '--echo', '--bytes', '1GiB']),
    /--bytes of the far end is not one serve passes on/,
  );
});

test('udp far-end options: a coalescing window under 10 ms, --gro alone or with a mode', () => {
  const u = requestFromArgs(['sink', 'udp', '--coalesce', '1ms', '--gro', '--on-full', 'wait']);
  assert.deepEqual(u.params, { coalesce: '1ms', gro: true, 'on-full': 'wait' });
  const r = parseRequest(JSON.stringify({ v: 1, type: 'test', ...u }), limits);
  assert.equal(r.type, 'test');
  if (r.type === 'test') assert.deepEqual(farArgs(r), ['--coalesce', '1ms', '--gro', '--on-full', 'wait']);
  refusedWith(
    req({ type: 'test', kind: 'udp', params: { coalesce: '5s' } }),
    'refused',
    /coalesce: '5s' is not a duration from 0 to 1 s/,
  );
});
