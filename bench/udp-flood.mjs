#!/usr/bin/env node
// Issue 18's UDP flood figures: `sockbuf sink udp --gro off` flooded by `sockbuf blast udp --gso on` at
// F × what the receiver takes (measured first, with 2 s probes at rising rates until one loses), for
// SECONDS; prints sent, received, drops, accounting, the overload reached (sent / received) and the
// sink's RSS growth from its ready line to its peak (sampled every 250 ms).
//   npm run build && flock /tmp/sockbuf-heavy.lock node bench/udp-flood.mjs [--seconds 30] [--factor 2] [--on-full wait]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    factor: { type: 'string', default: '2' },
    port: { type: 'string', default: '47330' },
    'on-full': { type: 'string', default: 'wait' },
  },
});
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const port = values.port;

function run(cpu, args) {
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, CLI, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = [];
  createInterface({ input: child.stdout }).on('line', (l) => l.startsWith('{') && lines.push(JSON.parse(l)));
  const exited = new Promise((resolve) => child.on('close', resolve));
  const line = async (pred) => {
    for (let i = 0; i < 2400; i++) {
      const l = lines.find(pred);
      if (l) return l;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no line from ${args.join(' ')}`);
  };
  return { child, line, exited };
}

const rssKiB = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

async function flood(seconds, rate) {
  const sink = run(1, [
    'sink',
    'udp',
    '--listen',
    `127.0.0.1:${port}`,
    '--gro',
    'off',
    '--on-full',
    values['on-full'],
    '--idle',
    '1s',
    '--json',
  ]);
  await sink.line((l) => l.event === 'ready');
  const rss0 = rssKiB(sink.child.pid);
  let peak = rss0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKiB(sink.child.pid));
  }, 250);
  const blast = run(0, [
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
  ]);
  const sent = await blast.line((l) => l.event === 'result');
  const got = await sink.line((l) => l.event === 'result');
  clearInterval(timer);
  await Promise.all([sink.exited, blast.exited]);
  return { sent, got, rssGrowthKiB: peak - rss0, rss0KiB: rss0, rssPeakKiB: peak };
}

// What the receiver takes: probes of 2 s at rising rates until the receiver loses datagrams (a probe
// that lost nothing measured the sender, not the receiver)
let takes = 0;
for (const r of ['200k', '400k', '800k', '1600k', 'max']) {
  const p = await flood(2, r);
  console.log(
    JSON.stringify({
      probe: r,
      sent: p.sent.sent,
      received: p.got.received,
      perSecond: Math.round(p.got.datagramsPerSecond),
    }),
  );
  takes = p.got.datagramsPerSecond;
  if (p.got.lost > 0) break;
}
const rate = Math.round(Number(values.factor) * takes);
const f = await flood(Number(values.seconds), rate);
const g = f.got;
const out = {
  seconds: Number(values.seconds),
  onFull: values['on-full'],
  receiverTakesPerSecond: Math.round(takes),
  rate,
  sent: f.sent.sent,
  sentPerSecond: Math.round(f.sent.datagramsPerSecond),
  receivedPerSecond: Math.round(g.received / f.sent.seconds),
  overload: +(f.sent.sent / g.received).toFixed(2),
  received: g.received,
  kernelDrops: g.kernelDrops,
  userspaceDrops: g.userspaceDrops,
  truncated: g.truncated,
  lost: g.lost,
  trailers: g.trailers,
  accounting: g.accounting,
  rssGrowthKiB: f.rssGrowthKiB,
  rss0KiB: f.rss0KiB,
  rssPeakKiB: f.rssPeakKiB,
  loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
};
console.log(JSON.stringify(out));
