import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lastEvent, MAX_EVENT_LINE, numberField, parseEventLine, substitute } from '../../src/bench/ends.js';

test('parseEventLine ignores a line nested too deep or too long to write out again', () => {
  assert.equal(parseEventLine(`{"event":"x","a":${'['.repeat(1e5)}${']'.repeat(1e5)}}`), undefined);
  assert.equal(parseEventLine(`{"event":"x","a":"${'x'.repeat(MAX_EVENT_LINE)}"}`), undefined);
  assert.deepEqual(parseEventLine('{"event":"x","a":[[1]]}'), { event: 'x', a: [[1]] });
});

test('parseEventLine takes JSON object lines only', () => {
  assert.deepEqual(parseEventLine('{"event":"ready","port":5201}'), { event: 'ready', port: 5201 });
  assert.equal(parseEventLine('listening on 5201'), undefined);
  assert.equal(parseEventLine('[1,2]'), undefined);
  assert.equal(parseEventLine('{broken'), undefined);
});

test('substitute fills placeholders from the ready line and refuses unknown ones', () => {
  assert.deepEqual(
    substitute(['--to', '{host}:{port}', '{x}y'], { host: '127.0.0.1', port: 40311, x: 'a' }),
    ['--to', '127.0.0.1:40311', 'ay'],
  );
  assert.throws(() => substitute(['{nope}'], { port: 1 }), /placeholder \{nope\}.*known: port/);
});

test('substitute brackets an IPv6 host followed by a port, and only then', () => {
  assert.deepEqual(
    substitute(['--listen', '{host}:0', '--to', '{host}:{port}', '--host', '{host}'], {
      host: '::1',
      port: 7,
    }),
    ['--listen', '[::1]:0', '--to', '[::1]:7', '--host', '::1'],
  );
});

test('lastEvent and numberField name what is missing', () => {
  const end = {
    lines: [
      { event: 'result', bytes: 1 },
      { event: 'result', bytes: 2 },
    ],
    code: 0,
    signal: null,
    stderrTail: [],
  };
  assert.equal(numberField(lastEvent(end, 'result'), 'bytes'), 2);
  assert.throws(() => lastEvent(end, 'ready'), /no "ready" line/);
  assert.throws(() => numberField({ event: 'result', bytes: 'x' }, 'bytes'), /field "bytes"/);
});
