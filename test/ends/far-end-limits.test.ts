import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FAR_END_ENV, farEndFromEnv, parseFarEnd } from '../../src/ends/far-end-limits.js';
import { UsageError } from '../../src/errors.js';

const caps = { secret: 'x'.repeat(16), maxBytes: 1e9, maxSeconds: 60, maxFrame: 65536, maxStreams: 8 };

test('a far end reads its secret and caps; a peer address is kept when short', () => {
  assert.deepEqual(parseFarEnd(JSON.stringify(caps)), caps);
  assert.equal(parseFarEnd(JSON.stringify({ ...caps, peer: '127.0.0.1' })).peer, '127.0.0.1');
  assert.equal(parseFarEnd(JSON.stringify({ ...caps, peer: 'p'.repeat(65) })).peer, undefined);
});

test('a far end refuses to start without JSON, the secret or a cap', () => {
  assert.throws(() => parseFarEnd('{'), new RegExp(`${FAR_END_ENV} is not JSON`));
  assert.throws(() => parseFarEnd(JSON.stringify({ ...caps, secret: 'short' })), /lacks the secret or a cap/);
  assert.throws(() => parseFarEnd(JSON.stringify({ ...caps, maxBytes: 0 })), /lacks the secret or a cap/);
  assert.throws(() => parseFarEnd('null'), /lacks the secret or a cap/);
});

test('farEndFromEnv: none when serve did not start this process; bad limits are a usage error', () => {
  assert.equal(farEndFromEnv({}), undefined);
  assert.deepEqual(farEndFromEnv({ [FAR_END_ENV]: JSON.stringify(caps) }), caps);
  assert.throws(() => farEndFromEnv({ [FAR_END_ENV]: '{}' }), UsageError);
});
