// bench ping's client end checks every echoed answer: its index and its bytes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const END = fileURLToPath(new URL('../../src/ends/bench-tcp.child.ts', import.meta.url));

/** An echo server that skips the hello and echoes the rest, with `spoil` applied to stream byte n. */
async function echo(spoil: (b: Buffer, at: number) => void) {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    let skip = -1;
    let seen = 0;
    s.on('data', (d: Buffer) => {
      let chunk = d;
      if (skip < 0) skip = 12 + d.readUInt32BE(8); // magic, length, JSON
      const cut = Math.min(skip, chunk.length);
      skip -= cut;
      chunk = Buffer.from(chunk.subarray(cut));
      spoil(chunk, seen);
      seen += chunk.length;
      s.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as net.AddressInfo).port };
}

function ping(port: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const args = ['--host', '127.0.0.1', '--port', String(port), '--size', '100', '--inflight', '4'];
    const c = spawn(process.execPath, ['--import', 'tsx', END, 'ping', ...args, '--seconds', '0.5']);
    let out = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.on('close', (code) => resolve({ code, out }));
  });
}

test('bench ping: a faithful echo passes; a changed byte or a changed index is counted (exit 1)', {
  timeout: 60_000,
}, async () => {
  /** Applies `f` to stream byte `n` if it is in this chunk. */
  const at = (n: number, f: (x: number) => number) => (b: Buffer, from: number) => {
    if (from <= n && n < from + b.length) b[n - from] = f(b[n - from]);
  };
  const cases: [string, (b: Buffer, at: number) => void, boolean][] = [
    ['faithful', () => {}, true],
    ['a body byte flipped', at(5000, (x) => x ^ 1), false],
    // the index of request 10 (bytes 4..11 of its frame) made 11: an answer out of place
    ['an index changed', at(10 * 104 + 11, (x) => x + 1), false],
  ];
  for (const [name, spoil, good] of cases) {
    const { server, port } = await echo(spoil);
    try {
      const r = await ping(port);
      const result = JSON.parse(r.out.trim().split('\n').pop() as string);
      assert.equal(result.mismatches === 0, good, `${name}: ${r.out}`);
      assert.equal(r.code, good ? 0 : 1, name);
    } finally {
      server.close();
    }
  }
});
