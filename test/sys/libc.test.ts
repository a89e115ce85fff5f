import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fn, pageSize, setThreadNice, setTimerSlack, timespec } from '../../src/sys/libc.js';

const PR_GET_TIMERSLACK = 30;

/** The nice value of the calling thread, from /proc (field 19 of stat, after the command name). */
function threadNice(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

test('setTimerSlack sets the calling thread’s timer slack', () => {
  const before = fn('prctl')(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  try {
    setTimerSlack(12345);
    assert.equal(fn('prctl')(PR_GET_TIMERSLACK, 0, 0, 0, 0), 12345);
  } finally {
    setTimerSlack(before);
  }
});

test('setThreadNice changes only the calling thread’s nice value', (t) => {
  const before = threadNice();
  try {
    assert.equal(setThreadNice(before + 3), true);
    assert.equal(threadNice(), before + 3);
    if (process.getuid?.() !== 0) return t.skip('lowering it again needs root');
  } finally {
    setThreadNice(before);
  }
  assert.equal(threadNice(), before);
});

test('pageSize is the kernel page size, as getconf reports it', () => {
  assert.equal(pageSize(), Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()));
});

test('timespec writes seconds and nanoseconds (struct timespec, LP64)', () => {
  const b = timespec(2_500_000_123);
  assert.equal(b.readBigInt64LE(0), 2n);
  assert.equal(b.readBigInt64LE(8), 500_000_123n);
  const into = Buffer.alloc(16, 0xff);
  assert.equal(timespec(999, into), into);
  assert.deepEqual([into.readBigInt64LE(0), into.readBigInt64LE(8)], [0n, 999n]);
});
