// Issue 22's send goals: sockbuf's sendBatch against node:dgram's send, 64 B app payloads, in one run,
// with the C references (scripts/c/udp.c) measured beside them:
//   dgram   node:dgram send(), one datagram a call            -> C recvmmsg receiver
//   batch   sendBatch() of 1024 payloads, plain sendmmsg       -> C recvmmsg receiver
//   gso     sendBatch() of 1024 equal-size payloads, GSO       -> C UDP_GRO receiver
//   c-mmsg  C sendmmsg of 64 datagrams a call                  -> C recvmmsg receiver
//   c-gso   C UDP_SEGMENT, 64 × 64 datagrams a call            -> C UDP_GRO receiver
// Each sender runs SECONDS on CPU 0, its receiver on CPU 1 (taskset), one pair at a time, RUNS times
// in turn. The rate of each is what its receiver counted (datagrams / time from first to last); the
// receivers nap 100 µs when empty instead of sleeping in poll, so that no sender pays a wake-up per
// datagram. On loopback the kernel's receive path still runs on the sender's CPU (about 30 % of a C
// sendmmsg sender's profile): every sender carries that alike. Run it under the team's heavy lock:
//   flock /tmp/sockbuf-heavy.lock node --import tsx scripts/udp-send-rate.ts [--seconds 3] [--runs 3]
//     [--size 64] [--only dgram,batch,gso,c-mmsg,c-gso]
// Prints one JSON line per pair and a summary (ratios to node:dgram within each run, and medians).
// test/scripts/udp-send-rate.test.ts runs it for a fraction of a second.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildC, type Line, num, runPinned } from './lib/pinned.js';

const KINDS = ['dgram', 'batch', 'gso', 'c-mmsg', 'c-gso'] as const;
type Kind = (typeof KINDS)[number];

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
    size: { type: 'string', default: '64' },
    port: { type: 'string', default: '47330' },
    only: { type: 'string', default: KINDS.join(',') },
  },
});
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const size = Number(values.size);
const port = values.port;
const only = values.only.split(',') as Kind[];
if (!(seconds > 0 && seconds <= 600))
  throw new Error(`--seconds: expected more than 0 and at most 600, got '${values.seconds}'`);
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 50))
  throw new Error(`--runs: expected a whole number from 1 to 50, got '${values.runs}'`);
if (!(Number.isInteger(size) && size >= 1 && size <= 1024))
  throw new Error(`--size: expected a whole number from 1 to 1024, got '${values.size}'`);
if (!only.every((k) => KINDS.includes(k)))
  throw new Error(`--only: expected some of ${KINDS.join(',')}, got '${values.only}'`);
if (size !== 64 && only.some((k) => k.startsWith('c-')))
  throw new Error('--size: the C senders send 64 B only (leave out c-mmsg,c-gso)');

const CHILD = fileURLToPath(new URL('./lib/udp-send-child.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-sendrate-'));
const bound = seconds + 60;
const NAP_US = '100';

function sender(kind: Kind, C: string) {
  if (kind === 'c-mmsg') return runPinned(0, C, ['send-mmsg', port, String(seconds)], bound);
  if (kind === 'c-gso') return runPinned(0, C, ['send-gso', port, String(seconds)], bound);
  return runPinned(
    0,
    process.execPath,
    ['--import', 'tsx', CHILD, kind, port, String(seconds), String(size)],
    bound,
  );
}

interface Pair {
  run: number;
  kind: Kind;
  sent: Line;
  received: Line;
}

async function pair(run: number, kind: Kind, C: string): Promise<Pair> {
  const gro = kind === 'gso' || kind === 'c-gso';
  const r = runPinned(1, C, [gro ? 'recv-gro' : 'recv-mmsg', port, NAP_US], bound);
  await r.line((l) => l.ready === true);
  const s = sender(kind, C);
  const sent = await s.line((l) => 'sent' in l, bound * 1000);
  const received = await r.line((l) => 'received' in l, bound * 1000);
  await Promise.all([r.exited, s.exited]);
  const out = { run, kind, sent, received };
  console.log(JSON.stringify(out));
  return out;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results: Pair[] = [];
const load0 = loadavg();
try {
  const C = buildC(dir);
  for (let run = 1; run <= runs; run++) for (const kind of only) results.push(await pair(run, kind, C));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const rate = (p: Pair) => num(p.received, 'datagramsPerSecond');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(
  `\nsummary: ${size} B, ${seconds} s a pair, ${runs} runs; load average ${load0} at the start, ${loadavg()} at the end`,
);
const ratios: Record<string, number[]> = {};
for (let run = 1; run <= runs; run++) {
  const of = results.filter((p) => p.run === run);
  const base = of.find((p) => p.kind === 'dgram');
  const cells = of.map((p) => {
    const x = base ? rate(p) / rate(base) : Number.NaN;
    if (base && p !== base) ratios[p.kind] = [...(ratios[p.kind] ?? []), x];
    const lost = num(p.sent, 'sent') - num(p.received, 'received');
    return `${p.kind} ${Math.round(rate(p))}/s${base ? ` (${x.toFixed(2)}×)` : ''}${lost > 0 ? ` [${lost} not received]` : ''}`;
  });
  console.log(`run ${run}: ${cells.join(', ')}`);
}
for (const [kind, xs] of Object.entries(ratios))
  console.log(
    `${kind} ÷ dgram: median ${median(xs).toFixed(2)}× (${xs.map((x) => x.toFixed(2)).join(', ')})`,
  );
