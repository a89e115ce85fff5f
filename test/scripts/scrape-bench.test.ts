// scripts/scrape-bench.ts with a small count, so the benchmark cannot rot: it holds the sockets in a
// child, scrapes a real exporter (dist/) and reports figures that make sense; both children are gone after.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { alive } from '../../src/sys/process.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/scrape-bench.ts', import.meta.url));

test('scrape-bench: 300 sockets, two scrapes at --top 5 and 1000, figures reported', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', SCRIPT, '--sockets', '300', '--scrapes', '2', '--top', '5,1000', '--json'],
    { timeout: 60_000 },
  );
  const doc = JSON.parse(stdout);
  assert.equal(doc.sockets.udp, 30);
  assert.equal(doc.sockets.listeners, 3);
  assert.equal(doc.sockets.sockets, 30 + 3 + 2 * doc.sockets.connections);
  assert.deepEqual(
    doc.runs.map((r: { top: number }) => r.top),
    [5, 1000],
  );
  for (const r of doc.runs) {
    // the exporter saw at least the sockets the holder opened (other programs may have more)
    assert.ok(r.socketsSeen >= doc.sockets.sockets, `${r.socketsSeen} sockets seen`);
    assert.equal(r.scrapes.length, 2);
    for (const s of r.scrapes) assert.ok(s.seconds > 0 && s.bytes > 1000, JSON.stringify(s));
    assert.ok(r.rssMiB > 10 && r.peakRssMiB >= r.rssMiB, JSON.stringify(r));
    assert.ok(r.ssMedianSeconds > 0);
  }
  // the 30 UDP sockets dropped datagrams: at --top 1000 each has its series, at --top 5 only five do
  assert.ok(doc.runs[1].maxBytes > doc.runs[0].maxBytes);
  assert.equal(typeof doc.goal.met, 'boolean');
  for (const pid of doc.pids) assert.equal(alive(pid), false, `child ${pid} still running`);
});
