// For real-namespace tests: a `sockbuf lab up` of their own with a `sink tcp` in its server host,
// made before the file's tests and removed after them, by its --id only.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { after, before } from 'node:test';
import { SOCKBUF_ARGV } from '../cli/argv.js';

export const rootSkip = process.getuid?.() !== 0 && 'needs root (network namespaces, tun devices)';

const sockbufSync = (args: string[]) =>
  spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8', timeout: 60_000 });

export interface TestLab {
  /** The lab's id once `before` has run (empty when skipped). */
  id: string;
  /** `lab exec --id ID HOST -- CMD…` as sockbuf's arguments. */
  exec(host: 'client' | 'server', ...cmd: string[]): string[];
}

/** Registers before/after hooks that make the lab and its sink, and remove them. */
export function labWithSink(rtt: string, listen: string): TestLab {
  const lab: TestLab = {
    id: '',
    exec: (host, ...cmd) => ['lab', 'exec', '--id', lab.id, host, '--', ...cmd],
  };
  let sink: ChildProcess | undefined;
  before(async () => {
    if (rootSkip) return;
    const up = sockbufSync(['lab', 'up', '--rtt', rtt, '--no-measure', '--json']);
    assert.equal(up.status, 0, up.stderr);
    lab.id = String((JSON.parse(up.stdout) as { id: string }).id);
    sink = spawn(
      process.execPath,
      [...SOCKBUF_ARGV, ...lab.exec('server', 'sockbuf', 'sink', 'tcp', '--listen', listen)],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    await new Promise<void>((resolve, reject) => {
      let out = '';
      sink?.stdout?.on('data', (d) => {
        out += d;
        if (out.includes('listening')) resolve();
      });
      sink?.once('exit', () => reject(new Error(`sink exited: ${out}`)));
    });
  });
  after(() => {
    sink?.kill('SIGTERM');
    if (lab.id) sockbufSync(['lab', 'down', '--id', lab.id]);
  });
  return lab;
}
