// The first signal keeps the results (issue 44, item 3): SIGINT on `lab exec client -- sockbuf blast …`
// (Ctrl-C: the signal reaches lab exec and blast alike; kill -INT: lab exec alone, which passes it on)
// prints blast's summary, and so does `lab -- blast`. Before, lab exec died at once and blast with it
// (its parent-death signal), summary lost. Real namespaces: root only; about 15 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from '../cli/argv.js';
import { labWithSink, rootSkip } from './lab-sink.js';

const skip = rootSkip;
const lab = labWithSink('1ms', '10.201.0.2:5201');

/** Runs `argv` (a lab command running blast) in a process group of its own, signals it once it sends. */
async function interrupted(
  argv: string[],
  how: 'group' | 'process',
): Promise<{ code: number | null; out: string; ms: number }> {
  const p = spawn(process.execPath, [...SOCKBUF_ARGV, ...argv], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  p.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      p.stdout?.on('data', (d) => {
        out += d;
        // blast's first interval line: it is sending
        if (/\n.*\d/.test(out)) resolve();
      });
      p.once('exit', () => reject(new Error(`exited before sending: ${out}${err}`)));
    });
    const t0 = Date.now();
    // Ctrl-C in a terminal signals the whole foreground group; kill -INT only the process
    process.kill(how === 'group' ? -(p.pid as number) : (p.pid as number), 'SIGINT');
    const code = await exited;
    return { code, out: out + err, ms: Date.now() - t0 };
  } finally {
    try {
      process.kill(-(p.pid as number), 'SIGKILL');
    } catch {
      // gone
    }
  }
}

for (const how of ['group', 'process'] as const) {
  test(`SIGINT to lab exec client -- sockbuf blast tcp (${how === 'group' ? 'Ctrl-C: the whole group' : 'kill -INT: lab exec only'}): blast's summary printed, exit 130`, {
    skip,
    timeout: 60_000,
  }, async (t) => {
    const r = await interrupted(
      [...lab.exec('client'), 'sockbuf', 'blast', 'tcp', '--to', '10.201.0.2:5201', '--duration', '30s'],
      how,
    );
    t.diagnostic(`lab exec ended ${r.ms} ms after SIGINT`);
    assert.equal(r.code, 130, r.out);
    assert.match(r.out, /sent .* in .* over 1 stream\(s\)/, 'blast printed its summary');
    assert.ok(r.ms < 6000, `${r.ms} ms`);
  });
}
