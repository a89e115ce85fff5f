// The exporter's /probe against the same test run alone (issue 24), alternating in one run:
//   iperf3:  `sockbuf blast tcp --iperf3` alone  vs  /probe?module=iperf3, both against one `iperf3 -s`
//   sockbuf: `sockbuf remote … -- sink tcp` + `blast tcp` alone  vs  /probe?module=sockbuf, both against one
//            `sockbuf serve` (its far end is the same `sink tcp --once` either way)
// Servers on CPU 1, the sending side (blast, or the exporter that runs the probe) on CPU 0 (taskset).
// Each round runs the four in a rotated order; the summary is the median of each and probe ÷ alone.
//   npm run build && node --import tsx scripts/probe-bench.ts [--rounds 5] [--duration 2s] [--json]
// Loopback only; every process is bounded in time and killed by its pid at the end.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { builtCli, type Line, num, runPinned } from './lib/pinned.js';
import { freePort } from './lib/ports.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '2s' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const seconds = Number.parseFloat(values.duration);
const CLI = builtCli();
const BOUND = seconds + 60;

/** Listening on 127.0.0.1:port (from /proc/net/tcp, so iperf3 -s sees no stray connection). */
async function listening(port: number): Promise<void> {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const end = Date.now() + 20_000;
  for (;;) {
    const rows = readFileSync('/proc/net/tcp', 'utf8').split('\n');
    if (rows.some((l) => l.trim().split(/\s+/)[1] === hex && l.trim().split(/\s+/)[3] === '0A')) return;
    if (Date.now() > end) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const children: ChildProcess[] = [];
const longRunning = (cpu: number, cmd: string, args: string[]) => {
  const c = spawn('taskset', ['-c', String(cpu), cmd, ...args], { stdio: 'ignore' });
  children.push(c);
  return c;
};

/** One scrape of /probe: its throughput (B/s) and whether it succeeded. */
async function probe(url: string): Promise<number> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(30_000) })).text();
  if (!/^sockbuf_probe_success 1$/m.test(text)) throw new Error(`probe failed: ${text.split('\n').at(-2)}`);
  return Number(/^sockbuf_probe_throughput_bytes_per_second (\S+)$/m.exec(text)?.[1]);
}

async function blastIperf3(port: number): Promise<number> {
  const args = [
    CLI,
    'blast',
    'tcp',
    '--iperf3',
    '--to',
    `127.0.0.1:${port}`,
    '--duration',
    values.duration,
    '--json',
  ];
  const b = runPinned(0, process.execPath, args, BOUND);
  return num(await b.line((l) => l.event === 'result', BOUND * 1000), 'bytesPerSecond');
}

/** blast tcp to a far end that serve started (what /probe?module=sockbuf does, as two processes). */
async function blastServe(port: number): Promise<number> {
  const far = runPinned(
    1,
    process.execPath,
    [CLI, 'remote', `127.0.0.1:${port}`, '--', 'sink', 'tcp', '--once', '--listen', '127.0.0.1:0', '--json'],
    BOUND,
  );
  const ready: Line = await far.line((l) => l.event === 'ready');
  const env = `SOCKBUF_SECRET=${String(ready.secret)}`;
  const args = [
    env,
    process.execPath,
    CLI,
    'blast',
    'tcp',
    '--to',
    `127.0.0.1:${ready.port}`,
    '--duration',
    values.duration,
    '--json',
  ];
  const b = runPinned(0, 'env', args, BOUND);
  const rate = num(await b.line((l) => l.event === 'result', BOUND * 1000), 'bytesPerSecond');
  await far.exited;
  return rate;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gbit = (bps: number) => ((bps * 8) / 1e9).toFixed(2);

try {
  const [iperf3Port, servePort, exporterPort] = [await freePort(), await freePort(), await freePort()];
  longRunning(1, 'iperf3', ['-s', '-B', '127.0.0.1', '-p', String(iperf3Port)]);
  longRunning(1, process.execPath, [CLI, 'serve', '--listen', `127.0.0.1:${servePort}`]);
  const exporter = ['exporter', '--listen', `127.0.0.1:${exporterPort}`, '--no-host-counters'];
  longRunning(0, process.execPath, [
    CLI,
    ...exporter,
    '--probe-allow',
    '127.0.0.1',
    '--probe-duration',
    values.duration,
  ]);
  await Promise.all([listening(iperf3Port), listening(servePort), listening(exporterPort)]);
  const base = `http://127.0.0.1:${exporterPort}/probe?target=127.0.0.1:`;
  const runs: Record<string, () => Promise<number>> = {
    'iperf3 alone': () => blastIperf3(iperf3Port),
    'iperf3 probe': () => probe(`${base}${iperf3Port}&module=iperf3`),
    'sockbuf alone': () => blastServe(servePort),
    'sockbuf probe': () => probe(`${base}${servePort}&module=sockbuf`),
  };
  const names = Object.keys(runs);
  const got: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    // rotated each round, and probe before alone every other round
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const name of r % 2 ? order.reverse() : order) {
      const v = await runs[name]();
      got[name].push(v);
      if (!values.json) process.stderr.write(`round ${r + 1} ${name}: ${gbit(v)} Gbit/s\n`);
    }
  }
  const summary = Object.fromEntries(names.map((n) => [n, median(got[n])]));
  const ratio = {
    iperf3: summary['iperf3 probe'] / summary['iperf3 alone'],
    sockbuf: summary['sockbuf probe'] / summary['sockbuf alone'],
  };
  if (values.json)
    process.stdout.write(
      `${JSON.stringify({ seconds, rounds, bytesPerSecond: got, median: summary, ratio })}\n`,
    );
  else {
    for (const n of names)
      process.stdout.write(`${n}: median ${gbit(summary[n])} Gbit/s (${got[n].map(gbit).join(', ')})\n`);
    for (const [m, x] of Object.entries(ratio))
      process.stdout.write(`${m}: probe ÷ alone = ${x.toFixed(3)}\n`);
  }
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
