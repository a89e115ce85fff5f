import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trackedSources, trackSource } from '../../src/observe/tracked.js';

test('trackSource adds a source until the returned function removes it', () => {
  const before = trackedSources().length;
  const src = { kind: 'tcp' as const, name: 'x', stats: () => ({ readBufferBytes: 1 }) };
  const untrack = trackSource(src);
  assert.ok(trackedSources().includes(src));
  untrack();
  untrack();
  assert.equal(trackedSources().length, before);
});
