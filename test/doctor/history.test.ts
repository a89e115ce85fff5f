import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareCounters, historyPath, loadHistory, saveHistory } from '../../src/doctor/history.js';

const snap = (time: number, counters: Record<string, number>, bootId = 'b1') => ({ time, counters, bootId });

test('growth since the last run; the boot when there is no history, a new boot id, or a counter went back', () => {
  const now = snap(10_000, { a: 12, b: 5 });
  assert.deepEqual(compareCounters(now, snap(4_000, { a: 9, b: 5 })), {
    kind: 'last-run',
    seconds: 6,
    grew: { a: 3, b: 0 },
  });
  assert.deepEqual(compareCounters(now, undefined), { kind: 'boot', grew: { a: 12, b: 5 } });
  assert.equal(compareCounters(now, snap(4_000, { a: 9 }, 'b0')).kind, 'boot');
  const back = compareCounters(now, snap(4_000, { a: 20, b: 5 }));
  assert.equal(back.kind, 'boot');
  assert.match(back.note ?? '', /rebooted/);
  assert.equal(compareCounters(now, snap(9_000, { a: 12 }), 'sample').kind, 'sample');
});

test('history files: one per proc root, the env override, round trip, garbage ignored', () => {
  assert.notEqual(historyPath('/proc', {}), historyPath('/tmp/fake', {}));
  assert.equal(historyPath('/proc', { SOCKBUF_DOCTOR_HISTORY: '/x/h.json' }), '/x/h.json');
  assert.match(
    historyPath('/proc', { XDG_STATE_HOME: '/state' }),
    /^\/state\/sockbuf\/doctor-[0-9a-f]{12}\.json$/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-history-'));
  try {
    const file = join(dir, 'sub', 'h.json');
    assert.equal(saveHistory(file, snap(1, { a: 1 })), undefined);
    assert.deepEqual(loadHistory(file), snap(1, { a: 1 }));
    writeFileSync(file, `{"time":1,"counters":${'['.repeat(10_000)}`);
    assert.equal(loadHistory(file), undefined);
    assert.equal(loadHistory(join(dir, 'none.json')), undefined);
    writeFileSync(join(dir, 'a-file'), '');
    assert.match(saveHistory(join(dir, 'a-file', 'h.json'), snap(1, {})) ?? '', /cannot write.*\(E[A-Z]+\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
