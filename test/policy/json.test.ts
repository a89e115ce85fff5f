import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonLimitError, jsonDepth, parseBoundedJson } from '../../src/policy/json.js';

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
