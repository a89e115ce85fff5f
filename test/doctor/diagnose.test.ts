import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { UsageError } from '../../src/index.js';
import { diagnose } from '../../src/tools.js';
import { fakeProc, GOOD, STOCK } from './fakeproc.js';

const good = fakeProc(GOOD);
const stock = fakeProc(STOCK, { readOnly: true });
after(() => {
  for (const d of [good, stock]) rmSync(d, { recursive: true, force: true });
});

test('diagnose: a program gets the findings, the exit status, the text, the document and a sysctl.d file', async () => {
  const d = await diagnose({ procRoot: stock, bandwidth: '10gbit', rtt: 2, history: false });
  assert.equal(d.problems, true);
  assert.deepEqual(d.targets, { bitsPerSecond: 10e9, rttSeconds: 0.002, udpRcvbufBytes: 8 * 1024 * 1024 });
  const rmem = d.findings.find((f) => f.name === 'net.core.rmem_max');
  assert.equal(rmem?.status, 'low');
  assert.match(d.text(), /net\.core\.rmem_max.*low/);
  const doc = d.document();
  assert.equal(doc.schema, 'sockbuf.v1');
  assert.equal(doc.command, 'doctor');
  assert.equal((doc.results as unknown[]).length, d.findings.length);
  assert.match(d.sysctlConf(), /^net\.core\.rmem_max = \d+$/m);
  const ok = await diagnose({ procRoot: good, history: false });
  assert.equal(ok.problems, false, ok.text());
});

test('diagnose: bad targets and a folder that is no /proc tree are usage errors naming the option', async () => {
  await assert.rejects(diagnose({ rtt: 0 }), (e) => e instanceof UsageError && /rtt: '0'/.test(e.message));
  await assert.rejects(
    diagnose({ bandwidth: 'fast' }),
    (e) => e instanceof UsageError && /bandwidth/.test(e.message),
  );
  await assert.rejects(
    diagnose({ procRoot: '/nonexistent' }),
    (e) => e instanceof UsageError && e.option === 'procRoot' && e.value === '/nonexistent',
  );
});

// issue 37: `doctor --bandwidth 9999999tbit` and `--rtt 99999h` were taken
test('doctorTargets: a bandwidth or an RTT no network has is a UsageError naming the option', async () => {
  const { doctorTargets } = await import('../../src/doctor/diagnose.js');
  assert.throws(
    () => doctorTargets({ bandwidth: '9999999tbit' }),
    (e: unknown) => e instanceof UsageError && e.option === 'bandwidth',
  );
  assert.throws(
    () => doctorTargets({ rtt: '99999h' }),
    (e: unknown) => e instanceof UsageError && e.option === 'rtt',
  );
  assert.equal(doctorTargets({ bandwidth: '10tbit', rtt: '1m' }).rttSeconds, 60);
});
