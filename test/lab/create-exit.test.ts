// A process that exits while its lab is still being created (its namespaces exist, the delay line is
// starting: a signal handler's process.exit lands there) takes the namespaces down with it, instead of
// leaving them to the next cleanStale. Found by interrupting scripts/osiris-lab.ts with SIGINT 6 s
// after its start (issue 43): both namespaces stayed until the next run. Root; ~2 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const LAB = fileURLToPath(new URL('../../src/lab/lab.ts', import.meta.url));

test('SIGINT during Lab.create: the process exits and no namespace of it is left', {
  skip: process.getuid?.() !== 0 ? 'needs root (a lab)' : !existsSync('/dev/net/tun') && 'needs /dev/net/tun',
  timeout: 60_000,
}, async () => {
  // the signal is sent once create() has made the namespaces and awaits the delay line: the handler
  // runs at that await, before the lab is open
  const code = `
    const { Lab } = await import(${JSON.stringify(LAB)});
    process.on('SIGINT', () => process.exit(130));
    const p = Lab.create({ rttMs: 1 });
    console.log(JSON.stringify({ made: ['c', 's'].map((h) => ${JSON.stringify('/run/netns/sbl-')} + process.pid + '-' + h) }));
    process.kill(process.pid, 'SIGINT');
    await p;
    console.log('created');
    setTimeout(() => {}, 5000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  const [exit] = (await once(child, 'exit')) as [number | null];
  const made = (JSON.parse(out.split('\n')[0]) as { made: string[] }).made;
  assert.equal(exit, 130, out);
  assert.doesNotMatch(out, /created/, 'the process ended inside create()');
  assert.deepEqual(
    made.filter((n) => existsSync(n)),
    [],
    'both namespaces removed at exit',
  );
});
