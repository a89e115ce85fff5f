import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { JsonLimitError, jsonDepth, parseBoundedJson, readBoundedJsonFile } from '../../src/policy/json.js';

test('jsonDepth counts brackets outside strings only', () => {
  assert.equal(jsonDepth('1'), 0);
  assert.equal(jsonDepth('{"a":[1,{"b":[]}]}'), 4);
  assert.equal(jsonDepth('{"a":"[[[[\\"[[["}'), 1);
  assert.equal(jsonDepth('"\\\\"'), 0);
});

test('parseBoundedJson refuses deep nesting and long text before parsing, parses the rest', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  assert.throws(
    () => parseBoundedJson(deep),
    (e: unknown) => e instanceof JsonLimitError && e.reason === 'too-deep',
  );
  assert.throws(
    () => parseBoundedJson('[1,2,3]', { maxLength: 3 }),
    (e: unknown) => e instanceof JsonLimitError && e.reason === 'too-long',
  );
  assert.deepEqual(parseBoundedJson('{"a":[1,2]}', { maxDepth: 2 }), { a: [1, 2] });
  assert.throws(() => parseBoundedJson('{"a":[[1]]}', { maxDepth: 2 }), JsonLimitError);
  assert.throws(() => parseBoundedJson('{'), SyntaxError);
});

test('readBoundedJsonFile refuses a file larger than its bound before reading it, and deep nesting', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-json-'));
  writeFileSync(join(dir, 'ok.json'), '{"a":1}');
  writeFileSync(join(dir, 'big.json'), `[${'1,'.repeat(1000)}1]`);
  writeFileSync(join(dir, 'deep.json'), `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  assert.deepEqual(readBoundedJsonFile(join(dir, 'ok.json'), { maxBytes: 100 }), { a: 1 });
  assert.throws(
    () => readBoundedJsonFile(join(dir, 'big.json'), { maxBytes: 100 }),
    (e: unknown) => e instanceof JsonLimitError && e.reason === 'too-long',
  );
  assert.throws(
    () => readBoundedJsonFile(join(dir, 'deep.json'), { maxBytes: 1 << 20 }),
    (e: unknown) => e instanceof JsonLimitError && e.reason === 'too-deep',
  );
  assert.throws(() => readBoundedJsonFile(join(dir, 'missing.json'), { maxBytes: 100 }), /ENOENT/);
});

test('readBoundedJsonFile stops at its cap while reading a device whose stat says 0 bytes (/dev/zero)', () => {
  assert.throws(() => readBoundedJsonFile('/dev/zero', { maxBytes: 4096 }), {
    name: 'JsonLimitError',
    message: /more than the 4096/,
  });
});
