import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { parseLabShorthand, parseLabSpec } from '../../src/lab/spec.js';

test('lab options with their defaults', () => {
  assert.deepEqual(parseLabSpec({}), { rttMs: 2, loss: 0, mtu: 1500, congestion: 'cubic' });
  assert.deepEqual(
    parseLabSpec({
      rtt: '1.61ms',
      bandwidth: '5gbit',
      loss: '0.1%',
      mtu: '65000',
      threads: '1',
      congestion: 'bbr',
    }),
    {
      rttMs: 1.61,
      bitsPerSecond: 5e9,
      loss: 0.001,
      mtu: 65000,
      threads: 1,
      congestion: 'bbr',
    },
  );
  assert.equal(parseLabSpec({ congestion: 'host' }).congestion, 'host');
});

test('a bad lab option is a usage error naming the option and the value', () => {
  assert.throws(
    () => parseLabSpec({ rtt: '2' }),
    (e: Error) => e instanceof UsageError && /for rtt: '2'/.test(e.message),
  );
  assert.throws(() => parseLabSpec({ rtt: '11s' }), /for rtt/);
  assert.throws(() => parseLabSpec({ bandwidth: 'fast' }), /for bandwidth: 'fast'/);
  assert.throws(() => parseLabSpec({ loss: '101%' }), /for loss/);
  assert.throws(() => parseLabSpec({ mtu: '100' }), /for mtu: '100'/);
  assert.throws(() => parseLabSpec({ threads: '3' }), /for threads/);
  assert.throws(
    () => parseLabSpec({ congestion: 'Cubic!' }),
    (e: Error) => e instanceof UsageError && /for congestion: 'Cubic!'/.test(e.message),
  );
  assert.throws(() => parseLabSpec({ congestion: 'a_name_far_too_long' }), /for congestion/);
});

test('the --lab shorthand of bench', () => {
  assert.deepEqual(parseLabShorthand('rtt=2ms,bandwidth=5gbit'), {
    rttMs: 2,
    bitsPerSecond: 5e9,
    loss: 0,
    mtu: 1500,
    congestion: 'cubic',
  });
  assert.equal(parseLabShorthand('rtt=2ms,congestion=reno').congestion, 'reno');
  assert.throws(() => parseLabShorthand('congestion=9x'), /for lab congestion: '9x'/);
  assert.throws(() => parseLabShorthand('rtt=2ms,speed=1'), /for lab: 'rtt=2ms,speed=1'/);
  assert.throws(() => parseLabShorthand('rtt=2x'), /for lab rtt: '2x'/);
});
