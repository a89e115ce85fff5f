import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clip, count } from '../../../src/bench/report/bounds.js';

test('a long string is cut, saying how many characters were left out, never inside a surrogate pair', () => {
  assert.equal(clip('short'), 'short');
  assert.equal(clip('x'.repeat(200)), 'x'.repeat(200));
  assert.equal(clip('x'.repeat(201)), `${'x'.repeat(200)}… (1 more characters)`);
  assert.equal(clip('abcdef', 3), 'abc… (3 more characters)');
  // U+1F600 is two UTF-16 units: a cut after its first would leave half a character
  assert.equal(clip('ab\u{1f600}cd', 3), 'ab… (4 more characters)');
  assert.equal(count(1234567), '1,234,567');
});
