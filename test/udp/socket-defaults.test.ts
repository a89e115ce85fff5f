import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultsFromEnv } from '../../src/udp/socket-defaults.js';

test('the preload reads the queue bound and the reader priority from the environment, checked', () => {
  assert.deepEqual(defaultsFromEnv({}), {});
  assert.deepEqual(
    defaultsFromEnv({ SOCKBUF_DGRAM_MAX_QUEUE_DELAY: '50', SOCKBUF_DGRAM_READER_NICE: '10' }),
    {
      maxQueueDelay: 50,
      readerNice: 10,
    },
  );
  assert.deepEqual(defaultsFromEnv({ SOCKBUF_DGRAM_MAX_QUEUE_DELAY: '2.5' }), { maxQueueDelay: 2.5 });
  assert.throws(() => defaultsFromEnv({ SOCKBUF_DGRAM_MAX_QUEUE_DELAY: '50ms' }), {
    message: "SOCKBUF_DGRAM_MAX_QUEUE_DELAY: expected milliseconds from 0 to 3600000, got '50ms'",
  });
  assert.throws(() => defaultsFromEnv({ SOCKBUF_DGRAM_MAX_QUEUE_DELAY: '-1' }), /got '-1'/);
  assert.throws(() => defaultsFromEnv({ SOCKBUF_DGRAM_READER_NICE: '40' }), {
    message: "SOCKBUF_DGRAM_READER_NICE: expected a whole number from 0 to 39, got '40'",
  });
  assert.throws(() => defaultsFromEnv({ SOCKBUF_DGRAM_READER_NICE: '-5' }), /got '-5'/);
});
