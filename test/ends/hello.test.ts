import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeHello, HelloDetector, MAGIC, secretMatches } from '../../src/ends/hello.js';

const hello = { sockbuf: 1 as const, test: 't', stream: 0, streams: 1, reverse: false, size: 100 };

test('a hello is told apart byte by byte, whatever the chunking, and the bytes after it are handed on', () => {
  const wire = Buffer.concat([encodeHello({ ...hello, secret: 'abc' }), Buffer.from('after')]);
  for (const step of [1, 3, 8, 13, wire.length]) {
    const d = new HelloDetector();
    let got: ReturnType<HelloDetector['push']> = { kind: 'more' };
    let off = 0;
    while (got.kind === 'more') {
      got = d.push(wire.subarray(off, off + step));
      off += step;
    }
    assert.equal(got.kind, 'hello');
    if (got.kind === 'hello') {
      assert.equal(got.hello.secret, 'abc');
      const after = Buffer.concat([got.rest, wire.subarray(off)]);
      assert.equal(after.toString(), 'after');
    }
  }
});

test('a plain stream is known at its first byte that differs from the magic; held bytes are given back', () => {
  assert.equal(new HelloDetector().push(Buffer.alloc(10)).kind, 'plain');
  assert.equal(new HelloDetector().push(Buffer.from('GET / HTTP/1.1')).kind, 'plain');
  const d = new HelloDetector();
  assert.equal(d.push(MAGIC.subarray(0, 3)).kind, 'more');
  const got = d.push(Buffer.from('x'));
  assert.equal(got.kind, 'plain');
  if (got.kind === 'plain') assert.deepEqual(got.held, MAGIC.subarray(0, 3));
});

test('a stream shorter than the magic is a plain stream; a cut hello is not', () => {
  const d = new HelloDetector();
  d.push(MAGIC.subarray(0, 5));
  assert.equal(d.end().kind, 'plain');
  const e = new HelloDetector();
  e.push(encodeHello(hello).subarray(0, 15));
  assert.equal(e.end().kind, 'bad');
});

test('an oversize or malformed hello is refused before its body is held', () => {
  const big = Buffer.concat([MAGIC, Buffer.from([0, 0, 0x20, 0])]);
  const got = new HelloDetector().push(big);
  assert.equal(got.kind, 'bad');
  const json = Buffer.from('{"sockbuf":2}');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(json.length);
  assert.equal(new HelloDetector().push(Buffer.concat([MAGIC, head, json])).kind, 'bad');
});

test('secrets compare in constant time and only when equal', () => {
  assert.ok(secretMatches('0123456789abcdef', '0123456789abcdef'));
  assert.ok(!secretMatches('0123456789abcdef', '0123456789abcdeF'));
  assert.ok(!secretMatches('0123456789abcdef', ''));
});
