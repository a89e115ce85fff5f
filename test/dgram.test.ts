// The `sockbuf/dgram` entry: what it exports (pinned: node:dgram's two names and a default export
// carrying them, as `import dgram from 'node:dgram'` has), from source.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as entry from '../src/dgram.js';

test("sockbuf/dgram exports createSocket and Socket, and a default export with both (as node:dgram's)", () => {
  assert.deepEqual(Object.keys(entry).sort(), ['Socket', 'createSocket', 'default']);
  assert.equal(entry.default.createSocket, entry.createSocket);
  assert.equal(entry.default.Socket, entry.Socket);
  const s = entry.createSocket('udp6');
  assert.ok(s instanceof entry.Socket);
  assert.equal(s.type, 'udp6');
  s.close();
});
