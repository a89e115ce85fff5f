// What the documentation names exists: every metric name (`sockbuf_…`) in README.md and docs/ is one a
// real exporter scrape or registerMetrics() serves, and docs/cli/exporter.md names every `sockbuf_…`
// series the exporter serves. The scrape is taken while the conditional series have something to
// show: a listener whose accept queue overflows (python3, backlog 1, never accepting) and a listener
// with SO_RCVBUF pinned whose connection is never read. Every repository path in a code span
// (`docs/…`, `src/…`, `scripts/…`, `test/…`, `examples/…`) exists. (Flags: test/docs-cli.test.ts.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { startExporter } from '../src/observe/exporter-server.js';
import { registerMetrics } from '../src/observe/metrics.js';
import { SO_RCVBUF, SOCK_STREAM, SOL_SOCKET } from '../src/sys/constants.js';
import { bindFd, createSocket, listenFd, listenOnFd, setIntOption } from '../src/sys/socket.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md') && !f.startsWith('api/'))
    .map((f) => join('docs', f))
    .sort();
  return ['README.md', ...docs];
}

/** The metric names of an exposition text (# TYPE lines). */
const typed = (text: string) => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));

/** A metric name as the docs write it: sockbuf_… (a trailing `_` or `*` is a prefix, skipped). */
function documented(text: string): Set<string> {
  return new Set([...text.matchAll(/\bsockbuf_[a-z0-9_]+\b(?![*_])/g)].map((m) => m[0]));
}

test('the metric names the docs use exist, and docs/cli/exporter.md names every sockbuf_ series a real scrape serves', {
  timeout: 60_000,
}, async () => {
  // a listener with SO_RCVBUF pinned (4 KiB), its one connection never read while the client writes
  const pinned = net.createServer({ pauseOnConnect: true }, (c) => c.on('error', () => {}));
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, 4096);
  bindFd(lfd, { host: '127.0.0.1', port: 0 });
  listenFd(lfd);
  await listenOnFd(pinned, lfd);
  const writer = net.connect((pinned.address() as net.AddressInfo).port, '127.0.0.1').on('error', () => {});
  writer.write(Buffer.alloc(1 << 20));
  // a listener with a backlog of 1 that never accepts, in another process
  const py = spawn('python3', [
    '-c',
    'import socket,sys\nl=socket.socket()\nl.bind(("127.0.0.1",0))\nl.listen(1)\nprint(l.getsockname()[1],flush=True)\nsys.stdin.read()',
  ]);
  const exp = await startExporter({ port: 0, top: 10_000 });
  const clients: net.Socket[] = [];
  let names = new Set<string>();
  try {
    const [line] = (await once(py.stdout, 'data')) as [Buffer];
    const port = Number(line.toString().trim());
    await fetch(exp.url); // the first scrape: a baseline for the busy and drop deltas
    for (let i = 0; i < 6; i++) clients.push(net.connect(port, '127.0.0.1').on('error', () => {}));
    const wanted = [
      'sockbuf_socket_listen_drops_total',
      'sockbuf_socket_peer_info',
      'sockbuf_socket_owner_info', // pin_info needs a flagged pinned socket (a stalled rwnd-limited stream): not made here
    ];
    let text = '';
    for (let i = 0; i < 20; i++) {
      await sleep(300);
      text = await (await fetch(exp.url)).text();
      const present = (n: string) => new RegExp(`^${n}\\{`, 'm').test(text);
      if (wanted.every(present)) break;
    }
    for (const n of wanted) assert.match(text, new RegExp(`^${n}\\{`, 'm'), `${n} has a sample`);
    names = typed(text);
  } finally {
    writer.destroy();
    pinned.close();
    for (const c of clients) c.destroy();
    py.kill();
    await exp.close();
  }
  const served = [...names].filter((n) => n.startsWith('sockbuf_'));
  assert.ok(served.includes('sockbuf_build_info'), served.join(' '));
  const page = readFileSync(join(ROOT, 'docs/cli/exporter.md'), 'utf8');
  assert.deepEqual(
    served.filter((n) => !documented(page).has(n)),
    [],
    'served by the exporter and not named in docs/cli/exporter.md',
  );
  // the in-process metrics of an application (registerMetrics)
  const app = new Registry();
  registerMetrics(app);
  // and /probe's answers (one test against a far end each: named where they are made, not run here)
  const probe = ['src/serve/probe.ts', 'src/serve/probe-http.ts'].flatMap((f) => [
    ...readFileSync(join(ROOT, f), 'utf8').matchAll(/'(sockbuf_probe_[a-z0-9_]+)'/g),
  ]);
  assert.ok(probe.length >= 10, `${probe.length} probe metrics`);
  const known = new Set([
    ...served,
    ...app.getMetricsAsArray().map((m) => m.name),
    ...probe.map((m) => m[1]),
  ]);
  const unknown: string[] = [];
  for (const p of docPages())
    for (const n of documented(readFileSync(join(ROOT, p), 'utf8')))
      if (!known.has(n)) unknown.push(`${p}: ${n}`);
  assert.deepEqual(unknown, [], 'metric names in the docs that nothing serves');
});

test('every repository path a page names in a code span exists', () => {
  const missing: string[] = [];
  for (const p of docPages()) {
    const text = readFileSync(join(ROOT, p), 'utf8');
    for (const m of text.matchAll(/`((?:docs|src|scripts|test|examples|etc)\/[\w./-]+)`/g)) {
      const path = m[1].replace(/[.:,]$/, '');
      if (/[*]|VERSION|NAME|\bN\b/.test(path)) continue; // a pattern or a placeholder, not a path
      if (!existsSync(join(ROOT, path))) missing.push(`${p}: ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});
