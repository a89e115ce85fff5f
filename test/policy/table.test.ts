import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable } from '../../src/policy/table.js';

test('formatTable pads columns, left-aligns text and right-aligns numbers', () => {
  const t = formatTable(
    ['policy', 'rate'],
    [
      ['adaptive', '2.1 Gbit/s'],
      ['data', '980 Mbit/s'],
    ],
  );
  assert.equal(
    t,
    ['policy          rate', '--------  ----------', 'adaptive  2.1 Gbit/s', 'data      980 Mbit/s'].join(
      '\n',
    ),
  );
});

test('an explicit alignment wins and missing cells are blank', () => {
  const t = formatTable([{ title: 'n', align: 'left' }, 'x'], [['1'], ['22', 'y']]);
  assert.deepEqual(t.split('\n'), ['n   x', '--  -', '1', '22  y']);
});
