#!/usr/bin/env node
// Issue 16's UDP speed goals, with same-run C references (bench/c/udp.c, built here with gcc):
//   1. C recvmmsg receiver  <- C sendmmsg sender, 64 B, full speed, SECONDS
//   2. `sockbuf sink udp` (defaults: onFull wait) <- the same C sender
//   3. `sockbuf sink udp --on-full drop`          <- the same C sender
//   4. C UDP_GRO receiver   <- C UDP_SEGMENT sender: its datagram rate R
//   5. `sockbuf sink udp` (GRO) <- `sockbuf blast udp --gso on --rate F×R`, for each fraction F
// Receiver on CPU 1, sender on CPU 0 (taskset), one at a time. Run it under the team's heavy lock:
//   npm run build && flock /tmp/sockbuf-heavy.lock node bench/udp-goals.mjs [--seconds 3] [--fractions 0.8,0.6]
// Prints one JSON line per run and a summary; loopback only, every run bounded in time.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    fractions: { type: 'string', default: '0.8' },
    port: { type: 'string', default: '47310' },
    only: { type: 'string', default: 'mmsg,gso' },
    // extra `sink udp` options for the GRO runs, e.g. --sink-args='--rcvbuf 32MiB'
    'sink-args': { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const fractions = values.fractions.split(',').map(Number);
const port = Number(values.port);
const only = values.only.split(',');
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-udpc-'));
const C = join(dir, 'udp');
execFileSync('gcc', ['-O2', '-Wall', '-o', C, new URL('./c/udp.c', import.meta.url).pathname]);

/** Starts a process pinned to a CPU; resolves its JSON lines as they come. */
function run(cpu, cmd, args) {
  const child = spawn('taskset', ['-c', String(cpu), cmd, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    if (!l.startsWith('{')) return;
    lines.push(JSON.parse(l));
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  const line = async (pred, ms = 30_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const l = lines.find(pred);
      if (l) return l;
      if (Date.now() > end) throw new Error(`${cmd} ${args.join(' ')}: no line`);
      await Promise.race([new Promise((r) => waiters.push(r)), new Promise((r) => setTimeout(r, 200))]);
    }
  };
  const timer = setTimeout(() => child.kill(), (seconds + 60) * 1000);
  exited.then(() => clearTimeout(timer));
  return { child, line, exited };
}

const sink = (extra) =>
  run(1, process.execPath, [
    CLI,
    'sink',
    'udp',
    '--listen',
    `127.0.0.1:${port}`,
    '--idle',
    '1s',
    '--json',
    ...extra,
  ]);

async function pair(name, receiver, readyPred, sender) {
  const r = receiver();
  await r.line(readyPred);
  const s = sender();
  const sent = await s.line((l) => 'sent' in l);
  const got = await r.line((l) => 'received' in l && (l.event === 'result' || l.event === undefined));
  await Promise.all([r.exited, s.exited]);
  const out = { name, sent, received: got };
  console.log(JSON.stringify(out));
  return out;
}

const results = {};
const cSend = () => run(0, C, ['send-mmsg', String(port), String(seconds)]);
try {
  if (only.includes('mmsg')) {
    results.cRecv = await pair(
      'C recvmmsg <- C sendmmsg',
      () => run(1, C, ['recv-mmsg', String(port)]),
      (l) => l.ready,
      cSend,
    );
    results.sinkWait = await pair(
      'sink udp (defaults) <- C sendmmsg',
      () => sink([]),
      (l) => l.event === 'ready',
      cSend,
    );
    results.sinkDrop = await pair(
      'sink udp --on-full drop <- C sendmmsg',
      () => sink(['--on-full', 'drop']),
      (l) => l.event === 'ready',
      cSend,
    );
  }
  if (only.includes('gso')) {
    results.cGro = await pair(
      'C UDP_GRO <- C UDP_SEGMENT',
      () => run(1, C, ['recv-gro', String(port)]),
      (l) => l.ready,
      () => run(0, C, ['send-gso', String(port), String(seconds)]),
    );
    const R = results.cGro.received.datagramsPerSecond;
    results.gso = [];
    for (const f of fractions) {
      const rate = Math.round(f * R);
      const o = await pair(
        `sink udp (GRO) <- blast udp --gso on --rate ${rate} (${f} × C pair)`,
        () => sink(values['sink-args'].split(' ').filter(Boolean)),
        (l) => l.event === 'ready',
        () =>
          run(0, process.execPath, [
            CLI,
            'blast',
            'udp',
            '--to',
            `127.0.0.1:${port}`,
            '--gso',
            'on',
            '--rate',
            String(rate),
            '--duration',
            `${seconds}s`,
            '--json',
          ]),
      );
      results.gso.push({ fraction: f, rate, ...o });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const loss = (sent, received) => (sent ? (100 * (sent - received)) / sent : 0);
console.log(
  '\nsummary (load average at the end:',
  execFileSync('cat', ['/proc/loadavg']).toString().trim(),
  ')',
);
if (results.cRecv) {
  const c = results.cRecv;
  console.log(
    `C recvmmsg:        sent ${c.sent.sent} at ${c.sent.datagramsPerSecond}/s, received ${c.received.received}, kernel drops ${c.received.kernelDrops}`,
  );
  for (const k of ['sinkWait', 'sinkDrop']) {
    const s = results[k];
    const r = s.received;
    console.log(
      `${k === 'sinkWait' ? 'sink (wait)' : 'sink (drop)'}:       sent ${s.sent.sent} at ${s.sent.datagramsPerSecond}/s, received ${r.received} (${loss(s.sent.sent, r.received).toFixed(3)} % lost), kernel drops ${r.kernelDrops}, userspace drops ${r.userspaceDrops}, unaccounted ${r.accounting?.unaccounted}`,
    );
  }
}
if (results.cGro) {
  const c = results.cGro;
  console.log(
    `C GSO -> GRO:      ${c.received.datagramsPerSecond} datagrams/s received (sent ${c.sent.sent}, received ${c.received.received})`,
  );
  for (const g of results.gso)
    console.log(
      `sockbuf GSO->GRO ${g.fraction}×: rate ${g.rate}/s, sent ${g.sent.sent}, received ${g.received.received}, lost ${g.received.lost} (${loss(g.sent.sent, g.received.received).toFixed(3)} %)`,
    );
}
