// Issue 25's and 45's drain benchmark: how fast one loopback stream drains through each reader, against
// a C read() loop on the same C sender in the same round (scripts/c/tcp-drain.c, built here with gcc into a
// temporary directory). The receivers: the C loop, `sockbuf sink tcp --reader R` for each reader, a plain
// node:net server whose 'data' handler only counts bytes (src/ends/net-drain.child.ts), and the seed's own
// reader, Erlang/OTP's `socket:recv(S, 0)` loop (scripts/erl/otp-drain.escript) with OTP's default
// buffer and with {otp, rcvbuf} = 256 KiB, run with the `erl` rabbitmq-server brings (skipped, saying
// so, where escript is missing). Each round runs every receiver once, the order rotated round by round;
// the sender and the receiver each pinned to its own CPU (taskset). Each receiver is judged by the median
// of its per-round ratio to the same round's C loop, with a 90 % interval (src/bench/paired.ts); a goal's
// ratio whose interval reaches past ±20 % gets no verdict ("too noisy, rerun"). Exit 1 when a goal is not
// met or too noisy. The sender says its CPU time too: near 100 % busy, the rate is the sender's.
//   npm run build && node --import tsx scripts/drain-bench.ts [--bytes 2GiB] [--repeat 9]
//     [--readers adaptive,fixed:64K,…] [--c-size 64K] [--frame 128K] [--framed] [--warm SIZE]
//     [--timeout 60s] [--json]
// --warm SIZE sends SIZE bytes more first, on the same connection, and times the rest from the sender
// (from its first frame past them to the receiver's close), for every receiver alike: a fresh process's
// first bytes run before V8 has compiled the read path (Node's readers) or the BEAM loaded (OTP), which
// a long-lived server pays once; without it each run is a fresh process's first --bytes.
// Bounded: every run sends --bytes and is killed after --timeout. Loopback only.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  formatInterval,
  formatJudged,
  type JudgedRatio,
  judgeRatio,
  type MedianInterval,
  medianInterval,
  perRound,
} from '../src/bench/paired.js';
import { encodeHello } from '../src/ends/hello.js';
import { parseDuration, parseList, parseSize } from '../src/policy/units.js';
import { which } from '../src/sys/process.js';
import { parseReader } from '../src/tcp/reader.js';
import { buildC, builtCli, type Line, num, type Pinned, runPinned } from './lib/pinned.js';

const DEFAULT_READERS = 'adaptive,fixed:16K,fixed:32K,fixed:64K,fixed:128K,fixed:256K';
const OTP_RCVBUF = 256 * 1024;

export interface Run {
  receiver: string;
  round: number;
  bytes: number;
  seconds: number;
  bytesPerSecond: number;
  reads: number;
  /** The receiving process's CPU time (user + system): C from its start, the sink from ready. */
  cpuSeconds: number;
  /** The C sender's CPU time ÷ its wall time, connect to close: near 1, the sender set the rate. */
  senderBusy: number;
}

interface Options {
  bytes: number;
  repeat: number;
  readers: string[];
  cSize: number;
  frame: number;
  framed: boolean;
  /** Bytes sent before the measured --bytes (0: none; the rate is then the receiver's own). */
  warm: number;
  timeoutMs: number;
  senderCpu: number;
  receiverCpu: number;
  cli: string;
  /** Another build's CLI (e.g. main's dist/cli/main.js): its adaptive sink runs too. */
  baseline?: string;
  json: boolean;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      // a fresh sink's first connection pays ~15–30 ms of cold code (tcp_info, JIT): 2 GiB keeps it small
      bytes: { type: 'string', default: '2GiB' },
      repeat: { type: 'string', default: '9' },
      readers: { type: 'string', default: DEFAULT_READERS },
      'c-size': { type: 'string', default: '64K' },
      frame: { type: 'string', default: '128K' },
      framed: { type: 'boolean', default: false },
      warm: { type: 'string', default: '0' },
      timeout: { type: 'string', default: '60s' },
      'sender-cpu': { type: 'string', default: '0' },
      'receiver-cpu': { type: 'string', default: '1' },
      cli: { type: 'string' },
      baseline: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const count = (v: string, name: string) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid value for --${name}: '${v}'`);
    return n;
  };
  return {
    bytes: parseSize(values.bytes, '--bytes'),
    repeat: Math.max(1, count(values.repeat, 'repeat')),
    // an adaptive reader's bounds are joined with '+' in the list, as in bench drain: adaptive:max=64K+poll=0
    readers: parseList(values.readers, '--readers', (v, o) => {
      const reader = v.replace(/\+/g, ',');
      parseReader(reader, o);
      return reader;
    }),
    cSize: parseSize(values['c-size'], '--c-size'),
    frame: parseSize(values.frame, '--frame'),
    framed: values.framed,
    warm: parseSize(values.warm, '--warm'),
    timeoutMs: parseDuration(values.timeout, '--timeout') * 1000,
    senderCpu: count(values['sender-cpu'], 'sender-cpu'),
    receiverCpu: count(values['receiver-cpu'], 'receiver-cpu'),
    cli: values.cli ?? builtCli(),
    baseline: values.baseline,
    json: values.json,
  };
}

/** A receiver to measure: its command, and how to read its result from its JSON lines. */
interface Receiver {
  name: string;
  command: string[];
  /** Bytes the sender writes before its frames (blast's hello), if any. */
  hello?: Buffer;
  /** The line that ends its run (C and OTP: the one with bytes; the sink: its connection; net: its result). */
  done: (l: Line) => boolean;
}

export const C_NAME = 'C read()';
export const NET_NAME = 'node:net data';
export const OTP_NAME = 'OTP socket:recv';
export const OTP_256K_NAME = 'OTP socket:recv rcvbuf=256K';

function receivers(o: Options, cBin: string, skipped: string[]): Receiver[] {
  const c: Receiver = { name: C_NAME, command: [cBin, 'recv', String(o.cSize)], done: (l) => 'bytes' in l };
  const sink = (reader: string, hello?: Buffer, cli = o.cli, tag = ''): Receiver => ({
    name: `sink ${reader}${hello ? ' framed' : ''}${tag}`,
    command: [
      process.execPath,
      cli,
      'sink',
      'tcp',
      '--listen',
      '127.0.0.1:0',
      '--reader',
      reader,
      '--once',
      '--json',
    ],
    hello,
    done: (l) => l.event === 'connection',
  });
  const net: Receiver = {
    name: NET_NAME,
    command: [process.execPath, join(dirname(o.cli), '../ends/net-drain.child.js'), '--host', '127.0.0.1'],
    done: (l) => l.event === 'result',
  };
  const list = [c, ...o.readers.map((r) => sink(r)), net];
  const escript = which('escript');
  if (escript) {
    const script = fileURLToPath(new URL('./erl/otp-drain.escript', import.meta.url));
    list.push(
      { name: OTP_NAME, command: [escript, script], done: (l) => 'bytes' in l },
      { name: OTP_256K_NAME, command: [escript, script, String(OTP_RCVBUF)], done: (l) => 'bytes' in l },
    );
  } else
    skipped.push(
      'OTP socket:recv: no escript on PATH (Erlang comes with rabbitmq-server: apt install erlang-base)',
    );
  if (o.framed) {
    const hello = encodeHello({
      sockbuf: 1,
      test: 'drain-bench',
      stream: 0,
      streams: 1,
      reverse: false,
      size: o.frame,
    });
    list.push(sink('adaptive', hello));
  }
  if (o.baseline) list.push(sink('adaptive', undefined, o.baseline, ' (baseline)'));
  return list;
}

/** One run: the receiver pinned to its CPU, then the sender on the other; each killed past the timeout. */
async function runOnce(o: Options, cBin: string, dir: string, r: Receiver, round: number): Promise<Run> {
  const bound = o.timeoutMs / 1000;
  const rx = runPinned(o.receiverCpu, r.command[0], r.command.slice(1), bound);
  let tx: Pinned | undefined;
  try {
    const ready = await rx.line((l) => typeof l.port === 'number', o.timeoutMs);
    const args = ['send', String(ready.port), String(o.bytes), String(o.frame)];
    if (r.hello) {
      const file = join(dir, 'hello');
      writeFileSync(file, r.hello);
      args.push(file);
    }
    // a warm-up goes first on the same connection: the sender is told through its environment
    tx = o.warm
      ? runPinned(o.senderCpu, 'env', [`TCP_DRAIN_WARM=${o.warm}`, cBin, ...args], bound)
      : runPinned(o.senderCpu, cBin, args, bound);
    const [rxCode, txCode] = await Promise.all([rx.exited, tx.exited]);
    if (rxCode !== 0 || txCode !== 0)
      throw new Error(
        `${r.name} round ${round}: receiver exit ${rxCode}, sender exit ${txCode} (bound ${bound} s)`,
      );
    const sent = await tx.line((l) => 'frames' in l, 0);
    const got = await rx.line(r.done, 0);
    // an older build's sink (--baseline) may not say its CPU
    const cpu = await rx.line((l) => 'cpuSeconds' in l, 0).catch(() => ({}) as Line);
    // the sink's connection line: bytes, seconds and bytes/s from accept to close, and its reads
    const reads = typeof got.reader === 'object' ? num(got.reader as Line, 'reads') : num(got, 'reads');
    const want = num(sent, 'bytes') + (r.hello?.length ?? 0);
    if (num(got, 'bytes') !== want)
      throw new Error(`${r.name} round ${round}: received ${num(got, 'bytes')} bytes of ${want}`);
    return {
      receiver: r.name,
      round,
      bytes: want,
      // warmed: the sender's time for what followed the warm-up, to the receiver's close
      seconds: o.warm ? num(sent, 'measuredSeconds') : num(got, 'seconds'),
      bytesPerSecond: o.warm
        ? num(sent, 'measuredBytes') / num(sent, 'measuredSeconds')
        : num(got, 'bytesPerSecond'),
      reads,
      cpuSeconds: num(cpu, 'cpuSeconds'),
      senderBusy: num(sent, 'cpuSeconds') / num(sent, 'seconds'),
    };
  } finally {
    rx.child.kill('SIGKILL');
    tx?.child.kill('SIGKILL');
    await Promise.all([rx.exited, tx?.exited]);
  }
}

export interface Summary {
  receiver: string;
  medianBytesPerSecond: number;
  runsBytesPerSecond: number[];
  /** This receiver's rate ÷ the C loop's in the same round: the median over rounds and its 90 % interval. */
  toC: MedianInterval;
  /** The median over rounds of the receiving process's CPU time per GB (1e9 bytes). */
  cpuMsPerGB: number;
  /** The median over rounds of the sender's CPU time ÷ wall time while this receiver drained it. */
  senderBusy: number;
  meanReadBytes: number;
}

/** One goal of issue 45: the default reader ÷ another receiver, per round, judged. */
export interface Goal extends JudgedRatio {
  against: string;
}

export interface DrainBench {
  params: Omit<Options, 'json' | 'cli' | 'timeoutMs'> & { timeoutSeconds: number };
  loadAverage: { start: number[]; end: number[] };
  skipped: string[];
  runs: Run[];
  summary: Summary[];
  /** The fixed reader whose median ratio to C is highest. */
  bestFixed: string;
  goals: Goal[];
  /** Every goal judged and met. */
  ok: boolean;
}

function median(v: number[]): number {
  return medianInterval(v).median;
}

/** `a`'s per-round ratios to `b`, round by round. */
function pairedRatios(runs: Run[], a: string, b: string): number[] {
  const rates = (name: string) =>
    runs
      .filter((x) => x.receiver === name)
      .sort((x, y) => x.round - y.round)
      .map((x) => x.bytesPerSecond);
  return perRound(rates(a), rates(b));
}

function summarize(
  o: Options,
  list: Receiver[],
  runs: Run[],
  load: number[][],
  skipped: string[],
): DrainBench {
  const summary: Summary[] = list.map((r) => {
    const mine = runs.filter((x) => x.receiver === r.name);
    const rates = mine.map((x) => x.bytesPerSecond);
    return {
      receiver: r.name,
      medianBytesPerSecond: median(rates),
      runsBytesPerSecond: rates,
      toC: medianInterval(pairedRatios(runs, r.name, C_NAME)),
      cpuMsPerGB: median(mine.map((x) => (x.cpuSeconds * 1e12) / x.bytes)),
      senderBusy: median(mine.map((x) => x.senderBusy)),
      meanReadBytes: median(mine.map((x) => (x.reads ? x.bytes / x.reads : 0))),
    };
  });
  const fixed = summary.filter((s) => /^sink fixed:\S+$/.test(s.receiver));
  const top = fixed.reduce<Summary | undefined>(
    (a, b) => (a === undefined || b.toC.median > a.toC.median ? b : a),
    undefined,
  );
  const has = (name: string) => summary.some((s) => s.receiver === name);
  const goals: Goal[] = [];
  const goal = (a: string, against: string, min: number) => {
    if (has(a) && has(against)) goals.push({ against, ...judgeRatio(pairedRatios(runs, a, against), min) });
  };
  goal('sink adaptive', C_NAME, 0.9);
  if (top) goal('sink adaptive', top.receiver, 0.95);
  goal('sink adaptive', NET_NAME, 1.3);
  goal('sink adaptive', OTP_256K_NAME, 1.0);
  goal('sink adaptive framed', 'sink adaptive', 0.85);
  const { json: _j, cli: _c, timeoutMs, ...params } = o;
  return {
    params: { ...params, timeoutSeconds: timeoutMs / 1000 },
    loadAverage: { start: load[0], end: load[1] },
    skipped,
    runs,
    summary,
    bestFixed: top?.receiver.replace('sink ', '') ?? 'none',
    goals,
    ok: goals.length > 0 && goals.every((g) => g.verdict === 'met'),
  };
}

export function formatTable(d: DrainBench): string {
  const gb = (v: number) => (v / 1e9).toFixed(2);
  const p = d.params;
  const w = Math.max(...d.summary.map((s) => s.receiver.length)) + 2;
  const out = [
    `drain-bench: ${p.bytes} bytes per run${p.warm ? ` after ${p.warm} bytes of warm-up (timed by the sender)` : ''}, ${p.repeat} rounds (order rotated each round), sender CPU ${p.senderCpu}, receiver CPU ${p.receiverCpu}, frames of ${p.frame} B`,
    `load average (1/5/15 min): ${d.loadAverage.start.map((v) => v.toFixed(2)).join(' ')} at start, ${d.loadAverage.end.map((v) => v.toFixed(2)).join(' ')} at end`,
    ...d.skipped.map((s) => `skipped: ${s}`),
    '',
    `${'receiver'.padEnd(w)}${'median GB/s'.padStart(12)}${'÷ C per round [90 %]'.padStart(23)}${'CPU ms/GB'.padStart(11)}${'sender busy'.padStart(13)}${'mean read B'.padStart(13)}   runs GB/s`,
  ];
  for (const s of d.summary)
    out.push(
      `${s.receiver.padEnd(w)}${gb(s.medianBytesPerSecond).padStart(12)}${formatInterval(s.toC).padStart(23)}${Math.round(s.cpuMsPerGB).toString().padStart(11)}${`${Math.round(s.senderBusy * 100)} %`.padStart(13)}${Math.round(s.meanReadBytes).toLocaleString('en-US').padStart(13)}   ${s.runsBytesPerSecond.map(gb).join(' ')}`,
    );
  out.push(
    '',
    `the best fixed reader (median ÷ C): ${d.bestFixed}`,
    'goals, per round, median [90 % interval]:',
  );
  const left = (g: Goal) => (g.against === 'sink adaptive' ? 'sink adaptive framed' : 'sink adaptive');
  for (const g of d.goals) out.push(`  ${left(g)} ÷ ${g.against}: ${formatJudged(g)}`);
  out.push(
    d.goals.some((g) => g.verdict === 'too noisy')
      ? 'too noisy, rerun: an interval reaches past ±20 % of its median (exit 1)'
      : `${d.ok ? 'every goal met' : 'a goal NOT met (exit 1)'}`,
    "(÷ C: the rate ÷ the C loop's in the same round; CPU: the receiving process, user + system, median",
    " over rounds (OTP: the runtime's); sender busy: the C sender's CPU ÷ its wall time, median)",
  );
  return out.join('\n');
}

export async function drainBench(
  argv: string[],
  log: (line: string) => void = () => {},
): Promise<DrainBench> {
  const o = options(argv);
  if (!which('taskset')) throw new Error('drain-bench needs taskset (util-linux) to pin each end to a CPU');
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-drain-'));
  try {
    const cBin = buildC(dir, 'tcp-drain');
    const skipped: string[] = [];
    const list = receivers(o, cBin, skipped);
    const load = [loadavg()];
    const runs: Run[] = [];
    for (let round = 1; round <= o.repeat; round++)
      for (let i = 0; i < list.length; i++) {
        // rotated: a receiver is not always the one that follows the same other
        const r = list[(i + round - 1) % list.length];
        const run = await runOnce(o, cBin, dir, r, round);
        log(`round ${round} ${r.name}: ${(run.bytesPerSecond / 1e9).toFixed(2)} GB/s`);
        runs.push(run);
      }
    load.push(loadavg());
    return summarize(o, list, runs, load, skipped);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const d = await drainBench(argv, (l) => process.stderr.write(`${l}\n`));
  process.stdout.write(`${argv.includes('--json') ? JSON.stringify(d) : formatTable(d)}\n`);
  process.exitCode = d.ok ? 0 : 1;
}
