// Issue 22's send goals: sockbuf's sendBatch against node:dgram's send, 64 B app payloads, in one run,
// with the C references (scripts/c/udp.c) measured beside them:
//   dgram   node:dgram send(), one datagram a call            -> C recvmmsg receiver
//   batch   sendBatch() of 1024 payloads, plain sendmmsg       -> C recvmmsg receiver
//   gso     sendBatch() of 1024 equal-size payloads, GSO       -> C UDP_GRO receiver
//   c-mmsg  C sendmmsg of 64 datagrams a call                  -> C recvmmsg receiver
//   c-gso   C UDP_SEGMENT, 64 × 64 datagrams a call            -> C UDP_GRO receiver
//   blast   `sockbuf blast udp --gso on` (the test header, sendSegments) -> C UDP_GRO receiver
// and, with --pace F (issue 23 item 6), for each fraction F of that run's c-gso rate R: the C
// UDP_SEGMENT sender paced at F × R and `blast udp --gso on --rate F×R`, each reached ÷ asked (the
// sender's own rate: what it sent over the time it ran; its receiver counts what arrived).
// Each sender runs SECONDS on CPU 0, its receiver on CPU 1 (taskset), one pair at a time, RUNS times
// in turn. The rate of each is what its receiver counted (datagrams / time from first to last); the
// receivers nap 100 µs when empty instead of sleeping in poll, so that no sender pays a wake-up per
// datagram, and hold 256 MiB, so that they keep up while off their CPU. On loopback the kernel's
// receive path still runs on the sender's CPU (about 30 % of a C sendmmsg sender's profile): every
// sender carries that alike. Run it under the team's heavy lock:
//   flock /tmp/sockbuf-heavy.lock node --import tsx scripts/udp-send-rate.ts [--seconds 3] [--runs 3]
//     [--size 64] [--only dgram,batch,gso,c-mmsg,c-gso,blast] [--pace 0.6,0.9]
// Prints one JSON line per pair and a summary: ratios to node:dgram within each run, and medians, of
// the rate (received ÷ the receiver's first-to-last span) and of what was received per CPU-second of
// the sender (user + system: the loopback receive path is in it). On a host whose CPUs are shared
// with other work the rate follows the sender's share of its CPU; the per-CPU-second figure does not.
// test/scripts/udp-send-rate.test.ts runs it for a fraction of a second.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildC, builtCli, type Line, num, runPinned } from './lib/pinned.js';
import { freePort } from './lib/ports.js';

const KINDS = ['dgram', 'batch', 'gso', 'c-mmsg', 'c-gso', 'blast'] as const;
type Kind = (typeof KINDS)[number];

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
    size: { type: 'string', default: '64' },
    // default: a free loopback UDP port from the kernel (a fixed one may be an ephemeral port in use)
    port: { type: 'string' },
    only: { type: 'string', default: KINDS.join(',') },
    pace: { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const runs = Number(values.runs);
const size = Number(values.size);
const port = values.port ?? String(await freePort('udp'));
const only = values.only.split(',') as Kind[];
if (!(seconds > 0 && seconds <= 600))
  throw new Error(`--seconds: expected more than 0 and at most 600, got '${values.seconds}'`);
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 50))
  throw new Error(`--runs: expected a whole number from 1 to 50, got '${values.runs}'`);
if (!(Number.isInteger(size) && size >= 1 && size <= 1024))
  throw new Error(`--size: expected a whole number from 1 to 1024, got '${values.size}'`);
if (!only.every((k) => KINDS.includes(k)))
  throw new Error(`--only: expected some of ${KINDS.join(',')}, got '${values.only}'`);
const paces = values.pace ? values.pace.split(',').map(Number) : [];
if (!paces.every((f) => f > 0 && f <= 2))
  throw new Error(`--pace: expected fractions in (0, 2], got '${values.pace}'`);
if (paces.length && !only.includes('c-gso')) throw new Error('--pace: needs c-gso in --only (its rate is R)');
if (size !== 64 && only.some((k) => k.startsWith('c-') || k === 'blast'))
  throw new Error('--size: the C senders and this blast send 64 B only (leave out c-mmsg,c-gso,blast)');

const CHILD = fileURLToPath(new URL('./lib/udp-send.child.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-sendrate-'));
const bound = seconds + 60;
const NAP_US = '100';
// a receive buffer that outlasts the receiver's time off its CPU on a loaded host (charged only when used)
const RCVBUF_MIB = '256';

function sender(kind: Kind, C: string, rate?: number) {
  const paced = rate === undefined ? [] : [String(Math.round(rate))];
  if (kind === 'c-mmsg') return runPinned(0, C, ['send-mmsg', port, String(seconds)], bound);
  if (kind === 'c-gso') return runPinned(0, C, ['send-gso', port, String(seconds), ...paced], bound);
  if (kind === 'blast') {
    const args = ['blast', 'udp', '--to', `127.0.0.1:${port}`, '--gso', 'on', '--duration', `${seconds}s`];
    const rateArgs = rate === undefined ? [] : ['--rate', String(Math.round(rate))];
    return runPinned(0, process.execPath, [builtCli(), ...args, ...rateArgs, '--json'], bound);
  }
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
  /** The pace asked (datagrams/s) and its fraction of the run's c-gso rate, for paced pairs. */
  asked?: number;
  fraction?: number;
  sent: Line;
  received: Line;
}

async function pair(run: number, kind: Kind, C: string, pace?: { rate: number; fraction: number }) {
  const gro = kind === 'gso' || kind === 'c-gso' || kind === 'blast';
  const r = runPinned(1, C, [gro ? 'recv-gro' : 'recv-mmsg', port, NAP_US, RCVBUF_MIB], bound);
  await r.line((l) => l.ready === true);
  const s = sender(kind, C, pace?.rate);
  const sent = await s.line((l) => 'sent' in l, bound * 1000);
  const received = await r.line((l) => 'received' in l, bound * 1000);
  await Promise.all([r.exited, s.exited]);
  const out: Pair = { run, kind, ...(pace && { asked: pace.rate, fraction: pace.fraction }), sent, received };
  console.log(JSON.stringify(out));
  return out;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results: Pair[] = [];
const load0 = loadavg();
try {
  const C = buildC(dir);
  for (let run = 1; run <= runs; run++) {
    for (const kind of only) results.push(await pair(run, kind, C));
    const R = num(
      results.find((p) => p.run === run && p.kind === 'c-gso' && !p.asked)?.received ?? {},
      'datagramsPerSecond',
    );
    for (const fraction of paces)
      for (const kind of ['c-gso', 'blast'] as const)
        results.push(await pair(run, kind, C, { rate: fraction * R, fraction }));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const rate = (p: Pair) => num(p.received, 'datagramsPerSecond');
/** Datagrams the receiver counted per CPU-second of the sender: what one core sends, whatever its share. */
const perCpu = (p: Pair) => num(p.received, 'received') / num(p.sent, 'cpuSeconds');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(
  `\nsummary: ${size} B, ${seconds} s a pair, ${runs} runs; load average ${load0} at the start, ${loadavg()} at the end`,
);
const ratios: Record<string, number[]> = {};
const cpuRatios: Record<string, number[]> = {};
for (let run = 1; run <= runs; run++) {
  const of = results.filter((p) => p.run === run && p.asked === undefined);
  const base = of.find((p) => p.kind === 'dgram');
  const cells = of.map((p) => {
    const x = base ? rate(p) / rate(base) : Number.NaN;
    const c = base ? perCpu(p) / perCpu(base) : Number.NaN;
    if (base && p !== base) {
      ratios[p.kind] = [...(ratios[p.kind] ?? []), x];
      cpuRatios[p.kind] = [...(cpuRatios[p.kind] ?? []), c];
    }
    const lost = num(p.sent, 'sent') - num(p.received, 'received');
    const cpu = `${Math.round(perCpu(p))}/cpu-s${base ? ` (${c.toFixed(2)}×)` : ''}`;
    return `${p.kind} ${Math.round(rate(p))}/s${base ? ` (${x.toFixed(2)}×)` : ''} ${cpu}${lost > 0 ? ` [${lost} not received]` : ''}`;
  });
  console.log(`run ${run}: ${cells.join(', ')}`);
}
const show = (xs: number[]) => `median ${median(xs).toFixed(2)}× (${xs.map((x) => x.toFixed(2)).join(', ')})`;
for (const [kind, xs] of Object.entries(ratios))
  console.log(`${kind} ÷ dgram: ${show(xs)}; per CPU-second ${show(cpuRatios[kind])}`);
// a paced sender's own rate (what it sent over the time it ran) against the pace asked; its
// receiver says whether all of it arrived
const reached: Record<string, number[]> = {};
for (const p of results.filter((x) => x.asked !== undefined)) {
  const key = `${p.kind} at ${p.fraction} × c-gso`;
  reached[key] = [...(reached[key] ?? []), num(p.sent, 'datagramsPerSecond') / (p.asked ?? 1)];
  const lost = num(p.sent, 'sent') - num(p.received, 'received');
  if (lost > 0) console.log(`run ${p.run}: ${key}: ${lost} of ${num(p.sent, 'sent')} not received`);
}
for (const [key, xs] of Object.entries(reached))
  console.log(
    `${key}: reached ÷ asked median ${median(xs).toFixed(3)} (${xs.map((x) => x.toFixed(3)).join(', ')})`,
  );
