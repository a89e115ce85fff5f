// Text output never writes a control character that came from input (issue 23): the helpers of
// src/cli/lines.ts, and the CLI fed hostile text from a peer (serve's control connection) and from the
// host (a process that names itself with a terminal escape, shown by inspect).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { printableFields, printableText } from '../../src/cli/lines.js';
import { SOCKBUF_ARGV } from './argv.js';

const ESC = '\u001b]0;pwned\u0007';
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal raw
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

test('printableFields escapes every string, nested; printableText keeps the text’s own line breaks', () => {
  assert.deepEqual(printableFields({ a: ESC, n: 1, list: [{ b: 'x\ny' }], ok: true }), {
    a: '\\x1b]0;pwned\\x07',
    n: 1,
    list: [{ b: 'x\\x0ay' }],
    ok: true,
  });
  assert.equal(printableText(`line 1\n${ESC}`), 'line 1\n\\x1b]0;pwned\\x07');
});

test("serve logs a hostile client's lines with their control characters escaped", async () => {
  const serve = spawn(process.execPath, [...SOCKBUF_ARGV, 'serve', '--listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  serve.stderr.on('data', (d) => (err += d));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      serve.stdout.on('data', (d) => {
        out += d;
        const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      serve.once('exit', () => reject(new Error(err)));
    });
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    // a parameter's value comes back in the refusal (raw, as the client sent it) and in serve's log
    const hostile = JSON.stringify({ v: 1, type: 'test', kind: 'tcp', params: { size: ESC } });
    s.end(`${hostile}\n${ESC}\n`);
    const deadline = Date.now() + 15_000;
    while ((err.match(/refused/g) ?? []).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    assert.match(err, /refused.*\\x1b\]0;pwned\\x07/);
    assert.ok(!RAW.test(err), JSON.stringify(err));
  } finally {
    serve.kill('SIGKILL');
  }
});

test('inspect shows a process that names itself with a terminal escape, escaped', async () => {
  const py = `import ctypes, socket, time
ctypes.CDLL(None).prctl(15, b"\\x1b]0;pwn\\x07", 0, 0, 0)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(30)`;
  const holder = spawn('python3', ['-c', py], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve) =>
      holder.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
    );
    const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, 'inspect', '--port', String(port)], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`${holder.pid}/\\\\x1b\\]0;pwn\\\\x07`));
    assert.ok(!RAW.test(r.stdout), JSON.stringify(r.stdout));
  } finally {
    holder.kill('SIGKILL');
  }
});
