// Issue 16's UDP speed goals, with same-run C references (scripts/c/udp.c, built here with gcc):
//   1. C recvmmsg receiver  <- C sendmmsg sender, 64 B, full speed, SECONDS
//   2. `sockbuf sink udp` (defaults: onFull wait) <- the same C sender
//   3. `sockbuf sink udp --on-full drop`          <- the same C sender
//   4. C UDP_GRO receiver   <- C UDP_SEGMENT sender: its datagram rate R
//   5. `sockbuf sink udp` (GRO) <- `sockbuf blast udp --gso on --rate F×R`, for each fraction F
// Receiver on CPU 1, sender on CPU 0 (taskset), one at a time. Run it under the team's heavy lock:
//   npm run build && flock /tmp/sockbuf-heavy.lock node --import tsx scripts/udp-goals.ts \
//     [--seconds 3] [--fractions 0.8,0.6] [--only mmsg,gso] [--sink-args='--rcvbuf 32MiB']
// Prints one JSON line per run and a summary; loopback only, every run bounded in time (SECONDS + 60 s).
// test/scripts/udp-goals.test.ts runs it for a fraction of a second.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildC, builtCli, type Line, num, type Pinned, runPinned } from './lib/pinned.js';
import { freePort } from './lib/ports.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    fractions: { type: 'string', default: '0.8' },
    // default: a free loopback UDP port from the kernel (a fixed one may be an ephemeral port in use)
    port: { type: 'string' },
    only: { type: 'string', default: 'mmsg,gso' },
    // extra `sink udp` options for the GRO runs, e.g. --sink-args='--rcvbuf 32MiB'
    'sink-args': { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const fractions = values.fractions.split(',').map(Number);
const port = values.port ?? String(await freePort('udp'));
const only = values.only.split(',');
if (!(seconds > 0 && seconds <= 600))
  throw new Error(`--seconds: expected more than 0 and at most 600, got '${values.seconds}'`);
if (!fractions.every((f) => f > 0 && f <= 10))
  throw new Error(`--fractions: expected numbers in (0, 10], got '${values.fractions}'`);
const CLI = builtCli();
const dir = mkdtempSync(join(tmpdir(), 'sockbuf-udpc-'));
const bound = seconds + 60;

const node = (cpu: number, args: string[]) => runPinned(cpu, process.execPath, [CLI, ...args], bound);
const sink = (extra: string[]) =>
  node(1, ['sink', 'udp', '--listen', `127.0.0.1:${port}`, '--idle', '1s', '--json', ...extra]);

interface Pair {
  name: string;
  sent: Line;
  received: Line;
}

/** Starts the receiver, then the sender once it is ready; both lines once both have exited. */
async function pair(
  name: string,
  receiver: () => Pinned,
  isReady: (l: Line) => boolean,
  sender: () => Pinned,
): Promise<Pair> {
  const r = receiver();
  await r.line(isReady);
  const s = sender();
  const sent = await s.line((l) => 'sent' in l, bound * 1000);
  const received = await r.line(
    (l) => 'received' in l && (l.event === 'result' || l.event === undefined),
    bound * 1000,
  );
  await Promise.all([r.exited, s.exited]);
  const out = { name, sent, received };
  console.log(JSON.stringify(out));
  return out;
}

const results: {
  cRecv?: Pair;
  sinkWait?: Pair;
  sinkDrop?: Pair;
  cGro?: Pair;
  gso: (Pair & { fraction: number; rate: number })[];
} = {
  gso: [],
};
try {
  const C = buildC(dir);
  const cSend = () => runPinned(0, C, ['send-mmsg', port, String(seconds)], bound);
  if (only.includes('mmsg')) {
    results.cRecv = await pair(
      'C recvmmsg <- C sendmmsg',
      () => runPinned(1, C, ['recv-mmsg', port], bound),
      (l) => l.ready === true,
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
      () => runPinned(1, C, ['recv-gro', port], bound),
      (l) => l.ready === true,
      () => runPinned(0, C, ['send-gso', port, String(seconds)], bound),
    );
    const R = num(results.cGro.received, 'datagramsPerSecond');
    for (const fraction of fractions) {
      const rate = Math.round(fraction * R);
      const o = await pair(
        `sink udp (GRO) <- blast udp --gso on --rate ${rate} (${fraction} × C pair)`,
        () => sink(values['sink-args'].split(' ').filter(Boolean)),
        (l) => l.event === 'ready',
        () =>
          node(0, [
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
      results.gso.push({ fraction, rate, ...o });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const loss = (sent: number, received: number) => (sent ? (100 * (sent - received)) / sent : 0);
console.log(`\nsummary (load average at the end: ${readFileSync('/proc/loadavg', 'utf8').trim()})`);
if (results.cRecv) {
  const c = results.cRecv;
  console.log(
    `C recvmmsg:        sent ${c.sent.sent} at ${c.sent.datagramsPerSecond}/s, received ${c.received.received}, kernel drops ${c.received.kernelDrops}`,
  );
  for (const [label, s] of [
    ['sink (wait)', results.sinkWait],
    ['sink (drop)', results.sinkDrop],
  ] as const) {
    if (!s) continue;
    const r = s.received;
    const accounting = r.accounting as { unaccounted?: number | null } | undefined;
    console.log(
      `${label}:       sent ${s.sent.sent} at ${s.sent.datagramsPerSecond}/s, received ${r.received} (${loss(num(s.sent, 'sent'), num(r, 'received')).toFixed(3)} % lost), kernel drops ${r.kernelDrops}, userspace drops ${r.userspaceDrops}, unaccounted ${accounting?.unaccounted}`,
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
      `sockbuf GSO->GRO ${g.fraction}×: rate ${g.rate}/s, sent ${g.sent.sent}, received ${g.received.received}, lost ${g.received.lost} (${loss(num(g.sent, 'sent'), num(g.received, 'received')).toFixed(3)} %)`,
    );
}
