// The adaptive reader's JIT priming (Reader.prime in src/tcp/reader.ts): a prober that moves must not
// throw away V8's optimized read callback, which cost the default reader 8–10 % of a 2 GiB drain.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pollerStats } from '../../src/tcp/poll.js';
import { Reader, sharedReadBufferBytes } from '../../src/tcp/reader.js';

const src = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

test('priming walks the paths a prober takes, and leaves the process poller as it was', () => {
  const before = pollerStats();
  const walked = Reader.prime();
  assert.ok(walked.moves >= 1, `moves ${walked.moves}`);
  assert.ok(walked.probes >= 7, `probes ${walked.probes}`);
  for (const arm of ['64K', '64K+poll', '128K', '256K'])
    assert.ok(walked.arms.includes(arm), `${arm} in ${walked.arms.join(' ')}`);
  assert.ok(walked.reads < 2000, `${walked.reads} reads: it ended on what it walked, not on its bound`);
  const after = pollerStats();
  assert.equal(after.starts, before.starts);
  assert.equal(after.turns, before.turns);
  assert.equal(after.polling, false, 'its chain stopped');
  assert.equal(sharedReadBufferBytes(), 0, 'the read buffer it grew to 256 KiB is let go');
});

test('a hot loopback stream through the default reader: the prober probes, V8 deoptimizes none of the reader', {
  timeout: 120_000,
}, () => {
  const bytes = 1 << 30;
  const script = `
    import net from 'node:net';
    import { Reader, resolveReader } from ${JSON.stringify(src('src/tcp/reader.ts'))};
    import { writeBulk } from ${JSON.stringify(src('test/lib/bulk.ts'))};
    const srv = net.createServer((s) => writeBulk(s, ${bytes}, 7));
    srv.listen(0, '127.0.0.1', () => {
      const r = new Reader(resolveReader('adaptive'));
      let got = 0;
      r.consumer = (c) => { got += c.length; };
      const sock = net.connect({ port: srv.address().port, host: '127.0.0.1', onread: r.onread() });
      r.attach(sock);
      sock.on('close', () => {
        srv.close();
        console.log('RESULT ' + JSON.stringify({ got, probe: r.stats().probe }));
      });
    });`;
  const run = spawnSync(
    process.execPath,
    ['--trace-deopt-verbose', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 100_000, maxBuffer: 256 << 20 },
  );
  assert.equal(run.status, 0, run.stderr);
  const result = /^RESULT (.*)$/m.exec(run.stdout);
  assert.ok(result, run.stderr);
  const { got, probe } = JSON.parse(result[1]);
  assert.equal(got, bytes);
  assert.ok(probe.probes >= 1, `the prober probed (${probe.probes} probes): the paths it takes ran`);
  // V8 names where it deoptimized: "deoptimize at <file:…/src/tcp/poll.ts:98:25> inlined at …"
  const ours = run.stdout
    .split('\n')
    .filter((l) => /deoptimize at .*src\/tcp\/(reader|probe|poll|sizer)\.ts/.test(l));
  assert.deepEqual(ours, [], 'deoptimizations in the reader');
});
