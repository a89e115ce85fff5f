import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printable, printableJson } from '../../src/policy/printable.js';

test('control characters from input are shown escaped, everything else is left as it is', () => {
  // a verdict text that would retitle an xterm and clear the screen
  assert.equal(printable('ok\u001b]0;pwned\u0007\u001b[2J'), 'ok\\x1b]0;pwned\\x07\\x1b[2J');
  assert.equal(printable('a\nb\tc\rd\u0000e\u007f'), 'a\\x0ab\\x09c\\x0dd\\x00e\\x7f');
  // C1: the 8-bit CSI (U+009B) is a control sequence introducer of its own on some terminals
  assert.equal(printable('\u009b31m\u0080\u009f'), '\\x9b31m\\x80\\x9f');
  // bidirectional overrides and isolates, and the line separators
  assert.equal(printable('a\u202eb\u2066c\u2069\u2028'), 'a\\u202eb\\u2066c\\u2069\\u2028');
  const plain = 'seed 000: reproduced — 0.31 × (µs, 1 000 B, ü, 日本, \\x1b stays)';
  assert.equal(printable(plain), plain);
  assert.equal(printable(''), '');
});

test('every code point below U+00A0 other than printable ASCII is escaped', () => {
  for (let c = 0; c < 0xa0; c++) {
    const ch = String.fromCharCode(c);
    const out = printable(ch);
    if (c >= 0x20 && c < 0x7f) assert.equal(out, ch);
    else assert.equal(out, `\\x${c.toString(16).padStart(2, '0')}`, `U+${c.toString(16)}`);
  }
});

test('JSON for a terminal: what JSON.stringify leaves raw is escaped, and the value is the same', () => {
  const value = { s: 'a\u001b[2Jb\u007fc\u009bd\u202ee\u2028f', n: 1 };
  const json = printableJson(JSON.stringify(value));
  assert.equal(json, '{"s":"a\\u001b[2Jb\\u007fc\\u009bd\\u202ee\\u2028f","n":1}');
  assert.deepEqual(JSON.parse(json), value);
});

// issue 37: U+061C, U+200B and U+FEFF passed through raw where U+200E/U+200F were escaped
test('every format character (Cf) is escaped: Arabic letter mark, zero-width, BOM, tags; text stays', () => {
  assert.equal(
    printable('a\u061cb\u200bc\u200cd\u200de\u2060f\ufeffg\u{e0041}h\u00adi'),
    'a\\u061cb\\u200bc\\u200cd\\u200de\\u2060f\\ufeffg\\u{e0041}h\\xadi',
  );
  assert.equal(printable('é 漢 😀 — × ≥'), 'é 漢 😀 — × ≥');
  const json = printableJson(JSON.stringify({ k: '\u061c\u200b\ufeff\u{e0041}' }));
  assert.doesNotMatch(json, /[\u061c\u200b\ufeff]|\u{e0041}/u);
  assert.deepEqual(JSON.parse(json), { k: '\u061c\u200b\ufeff\u{e0041}' });
});
