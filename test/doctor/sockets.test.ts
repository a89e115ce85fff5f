// The doctor's sockets section against real loopback sockets: a reader that stopped reading is
// listed, one line, with the process and where to look further; the section can say nothing.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatSocketFindings } from '../../src/doctor/sockets.js';
import { diagnose } from '../../src/tools.js';
import { fakeProc, GOOD } from './fakeproc.js';

const good = fakeProc(GOOD);
after(() => rmSync(good, { recursive: true, force: true }));

test('doctor lists a stalled reader on this host in its sockets section, one line pointing to inspect', {
  timeout: 15_000,
}, async () => {
  const accepted: net.Socket[] = [];
  const server = net.createServer({ pauseOnConnect: true }, (c) => accepted.push(c.on('error', () => {})));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const client = net.connect(port, '127.0.0.1').on('error', () => {});
  try {
    client.write(Buffer.alloc(8 << 20)); // far more than the window: the reader's queue fills
    await sleep(1500); // nothing received for a second: stalled
    const d = await diagnose({ procRoot: good, history: false, sockets: true });
    const mine = (d.sockets ?? []).filter((f) => f.local === `127.0.0.1:${port}`);
    assert.equal(mine.length, 1, JSON.stringify(d.sockets));
    assert.equal(mine[0].kind, 'stalled-reader');
    assert.equal(mine[0].pid, process.pid);
    const line = d
      .text()
      .split('\n')
      .find((l) => l.includes(`127.0.0.1:${port} →`));
    assert.match(
      line ?? '',
      /^! stalled-reader: tcp .*\(node, pid \d+\): .*zero window.*\(sockbuf inspect --port \d+ --watch 1s\)$/,
    );
    assert.equal(d.problems, false, 'information: the sysctl checks decide the exit code');
    assert.ok(Array.isArray(d.document().sockets));
    // a copied /proc tree: no sockets section unless asked
    const copied = await diagnose({ procRoot: good, history: false });
    assert.equal(copied.sockets, undefined);
    assert.doesNotMatch(copied.text(), /Sockets on this host/);
  } finally {
    client.destroy();
    for (const c of accepted) c.destroy();
    await new Promise((r) => server.close(r));
  }
});

test('formatSocketFindings: nothing found says so', () => {
  assert.deepEqual(formatSocketFindings([]), [
    'Sockets on this host (two samples, 0.5 s apart):',
    '  no pinned buffer holds back a loaded socket, no reader stalled.',
  ]);
});
