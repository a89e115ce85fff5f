// The first signal keeps the results (issue 44, item 3): SIGINT on `remote -- sink tcp` while a blast
// sends to it prints the far end's results within 6 s, through a real serve with its default 5 s grace
// after `done` (before the fix remote waited 3 s and printed "the far end's results did not come").
// Loopback only; about 5 s.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer } from '../../src/serve/server.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  test(`${sig} on remote -- sink tcp during a transfer: the far end's results printed within 6 s`, {
    timeout: 60_000,
  }, async (t) => {
    // serve's own defaults: the 5 s grace after `done`, the real sockbuf sink as the far end
    const srv = await startServer({
      listen: { host: '127.0.0.1', port: 0 },
      maxDurationSeconds: 60,
      maxBytes: 2 ** 40,
      idleSeconds: 30,
    });
    const remote = spawn(
      process.execPath,
      [...SOCKBUF_ARGV, 'remote', `127.0.0.1:${srv.address.port}`, '--', 'sink', 'tcp', '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: Record<string, unknown>[] = [];
    let readyLine: ((l: Record<string, unknown>) => void) | undefined;
    const ready = new Promise<Record<string, unknown>>((r) => {
      readyLine = r;
    });
    createInterface({ input: remote.stdout }).on('line', (l) => {
      const j = JSON.parse(l) as Record<string, unknown>;
      lines.push(j);
      if (j.event === 'ready') readyLine?.(j);
    });
    let stderr = '';
    remote.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => remote.once('exit', (code) => r(code)));
    let blast: ReturnType<typeof spawn> | undefined;
    try {
      const r = await ready;
      blast = spawn(
        process.execPath,
        [...SOCKBUF_ARGV, 'blast', 'tcp', '--to', `127.0.0.1:${r.port}`, '--duration', '30s', '--json'],
        {
          stdio: ['ignore', 'pipe', 'ignore'],
          env: { ...process.env, SOCKBUF_SECRET: String(r.secret ?? '') },
        },
      );
      // transferring once blast reports its first interval
      await new Promise<void>((resolve) => {
        createInterface({ input: blast?.stdout as NodeJS.ReadableStream }).on('line', (l) => {
          if (l.includes('"interval"')) resolve();
        });
      });
      const t0 = Date.now();
      remote.kill(sig);
      const code = await exited;
      const took = Date.now() - t0;
      t.diagnostic(`remote ended ${took} ms after ${sig}`);
      assert.equal(code, sig === 'SIGINT' ? 130 : 143, stderr);
      assert.ok(took < 6000, `remote ended ${took} ms after ${sig}`);
      const result = lines.find((l) => l.event === 'result');
      assert.ok(result, `the far end's result line was printed (stderr: ${stderr})`);
      assert.ok(Number(result.bytes) > 0, 'it counted what the blast sent');
      assert.doesNotMatch(stderr, /did not come/);
    } finally {
      remote.kill('SIGKILL');
      blast?.kill('SIGKILL');
      await sleep(50);
      await srv.close();
    }
  });
}
