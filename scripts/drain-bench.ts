// Issue 25's drain benchmark: how fast `sockbuf sink tcp` drains one loopback stream through each
// reader, against a C read() loop on the same C sender in the same run (scripts/c/tcp-drain.c, built
// here with gcc into a temporary directory). Each round runs every receiver once, in turn (C first);
// the best of the rounds counts. The sender and the receiver run one at a time, each pinned to its own
// CPU (taskset). The framed run is `sink tcp --reader adaptive` fed blast's hello and frames (--verify
// off) by the same sender, whose plain runs carry the very same frames without the hello. The sender
// says its CPU time too: a receiver that keeps a loopback sender ≥ 90 % busy is measuring the sender.
//   npm run build && node --import tsx scripts/drain-bench.ts [--bytes 4GiB] [--repeat 3]
//     [--readers adaptive,fixed:64K,…] [--c-size 64K] [--frame 128K] [--timeout 60s] [--json]
// Bounded: every run sends --bytes and is killed after --timeout. Loopback only.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { encodeHello } from '../src/ends/hello.js';
import { parseDuration, parseList, parseSize } from '../src/policy/units.js';
import { which } from '../src/sys/process.js';
import { parseReader } from '../src/tcp/reader.js';
import { buildC, builtCli, type Line, num, type Pinned, runPinned } from './lib/pinned.js';

const DEFAULT_READERS = 'adaptive,fixed:16K,fixed:64K,fixed:128K,fixed:256K,fixed:1M,data';

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
  timeoutMs: number;
  senderCpu: number;
  receiverCpu: number;
  cli: string;
  /** Another build's CLI (e.g. main's dist/cli/main.js): its adaptive sink runs too, plain and framed. */
  baseline?: string;
  json: boolean;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      // a fresh sink's first connection pays ~15–30 ms of cold code (tcp_info, JIT): 4 GiB keeps it small
      bytes: { type: 'string', default: '4GiB' },
      repeat: { type: 'string', default: '3' },
      readers: { type: 'string', default: DEFAULT_READERS },
      'c-size': { type: 'string', default: '64K' },
      frame: { type: 'string', default: '128K' },
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
  /** The line that ends its run (C: the one with bytes; the sink: its result). */
  done: (l: Line) => boolean;
}

function receivers(o: Options, cBin: string): Receiver[] {
  const c: Receiver = {
    name: `C read() ${o.cSize / 1024}K`,
    command: [cBin, 'recv', String(o.cSize)],
    done: (l) => 'bytes' in l,
  };
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
  const hello = encodeHello({
    sockbuf: 1,
    test: 'drain-bench',
    stream: 0,
    streams: 1,
    reverse: false,
    size: o.frame,
  });
  const list = [c, ...o.readers.map((r) => sink(r)), sink('adaptive', hello)];
  if (o.baseline)
    list.push(
      sink('adaptive', undefined, o.baseline, ' (baseline)'),
      sink('adaptive', hello, o.baseline, ' (baseline)'),
    );
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
    tx = runPinned(o.senderCpu, cBin, args, bound);
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
      seconds: num(got, 'seconds'),
      bytesPerSecond: num(got, 'bytesPerSecond'),
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
  bestBytesPerSecond: number;
  runsBytesPerSecond: number[];
  /** The median over rounds of this receiver's rate ÷ the C receiver's in the same round. */
  pairedRatioToC: number;
  /** The median over rounds of the receiving process's CPU time per GB (1e9 bytes). */
  cpuMsPerGB: number;
  /** The median over rounds of the sender's CPU time ÷ wall time while this receiver drained it. */
  senderBusy: number;
  meanReadBytes: number;
}

export interface DrainBench {
  params: Omit<Options, 'json' | 'cli' | 'timeoutMs'> & { timeoutSeconds: number };
  loadAverage: { start: number[]; end: number[] };
  runs: Run[];
  summary: Summary[];
  ratios: {
    adaptiveVsC: number;
    bestFixed: string;
    adaptiveVsBestFixed: number;
    /**
     * The median over rounds of adaptive's rate ÷ the best fixed reader's in the same round: large readers
     * read the same sizes (the queue bounds a read), so best-of-N against the best of several is a draw.
     */
    pairedAdaptiveVsBestFixed: number;
    framedVsPlain: number;
    /** C's CPU per byte ÷ adaptive's: about the rate ratio on cores of their own, were the receiver the bottleneck. */
    cpuCVsAdaptive: number;
    /** The best fixed reader's CPU per byte ÷ adaptive's (≥ 1: adaptive costs no more per byte). */
    cpuBestFixedVsAdaptive: number;
    /**
     * Adaptive's and the best fixed reader's runs both kept the sender ≥ 90 % busy (median): their rates
     * are the sender's, so the rate ratio cannot rank them; their CPU per byte can.
     */
    senderBound: boolean;
  };
}

/** A sender busier than this (CPU ÷ wall, median of the runs) set the rate, not the receiver. */
const SENDER_BOUND = 0.9;

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The median over rounds of `a`'s rate ÷ `b`'s rate in the same round. */
function pairedRatio(runs: Run[], a: string, b: string): number {
  const of = (name: string) => runs.filter((x) => x.receiver === name);
  const bRuns = of(b);
  return median(
    of(a).map(
      (x) => x.bytesPerSecond / (bRuns.find((y) => y.round === x.round)?.bytesPerSecond ?? Number.NaN),
    ),
  );
}

function summarize(o: Options, list: Receiver[], runs: Run[], load: number[][]): DrainBench {
  const summary = list.map((r) => {
    const mine = runs.filter((x) => x.receiver === r.name);
    const best = mine.reduce((a, b) => (b.bytesPerSecond > a.bytesPerSecond ? b : a));
    return {
      receiver: r.name,
      bestBytesPerSecond: best.bytesPerSecond,
      runsBytesPerSecond: mine.map((x) => x.bytesPerSecond),
      pairedRatioToC: pairedRatio(runs, r.name, list[0].name),
      cpuMsPerGB: median(mine.map((x) => (x.cpuSeconds * 1e12) / x.bytes)),
      senderBusy: median(mine.map((x) => x.senderBusy)),
      meanReadBytes: best.reads ? best.bytes / best.reads : 0,
    };
  });
  const best = (name: string) => summary.find((s) => s.receiver === name)?.bestBytesPerSecond ?? Number.NaN;
  const fixed = summary.filter((s) => /^sink fixed:\S+$/.test(s.receiver));
  const topFixed = fixed.reduce<Summary | undefined>(
    (a, b) => (a === undefined || b.bestBytesPerSecond > a.bestBytesPerSecond ? b : a),
    undefined,
  );
  const adaptive = best('sink adaptive');
  const adaptiveSummary = summary.find((x) => x.receiver === 'sink adaptive');
  const { json: _j, cli: _c, timeoutMs, ...params } = o;
  return {
    params: { ...params, timeoutSeconds: timeoutMs / 1000 },
    loadAverage: { start: load[0], end: load[1] },
    runs,
    summary,
    ratios: {
      adaptiveVsC: adaptive / summary[0].bestBytesPerSecond,
      bestFixed: topFixed?.receiver.replace('sink ', '') ?? 'none',
      adaptiveVsBestFixed: adaptive / (topFixed?.bestBytesPerSecond ?? Number.NaN),
      pairedAdaptiveVsBestFixed: topFixed
        ? pairedRatio(runs, 'sink adaptive', topFixed.receiver)
        : Number.NaN,
      framedVsPlain: best('sink adaptive framed') / adaptive,
      cpuCVsAdaptive: summary[0].cpuMsPerGB / (adaptiveSummary?.cpuMsPerGB ?? Number.NaN),
      cpuBestFixedVsAdaptive:
        (topFixed?.cpuMsPerGB ?? Number.NaN) / (adaptiveSummary?.cpuMsPerGB ?? Number.NaN),
      senderBound:
        topFixed !== undefined &&
        adaptiveSummary !== undefined &&
        Math.min(topFixed.senderBusy, adaptiveSummary.senderBusy) >= SENDER_BOUND,
    },
  };
}

export function formatTable(d: DrainBench): string {
  const gb = (v: number) => (v / 1e9).toFixed(2);
  const c = d.summary[0].bestBytesPerSecond;
  const p = d.params;
  const w = Math.max(...d.summary.map((s) => s.receiver.length)) + 2;
  const out = [
    `drain-bench: ${p.bytes} bytes per run, best of ${p.repeat}, sender CPU ${p.senderCpu}, receiver CPU ${p.receiverCpu}, frames of ${p.frame} B`,
    `load average (1/5/15 min): ${d.loadAverage.start.map((v) => v.toFixed(2)).join(' ')} at start, ${d.loadAverage.end.map((v) => v.toFixed(2)).join(' ')} at end`,
    '',
    `${'receiver'.padEnd(w)}${'best GB/s'.padStart(10)}${'× C'.padStart(7)}${'paired'.padStart(8)}${'CPU ms/GB'.padStart(11)}${'sender busy'.padStart(13)}${'mean read B'.padStart(13)}   runs GB/s`,
  ];
  for (const s of d.summary)
    out.push(
      `${s.receiver.padEnd(w)}${gb(s.bestBytesPerSecond).padStart(10)}${(s.bestBytesPerSecond / c).toFixed(2).padStart(7)}${s.pairedRatioToC.toFixed(2).padStart(8)}${Math.round(s.cpuMsPerGB).toString().padStart(11)}${`${Math.round(s.senderBusy * 100)} %`.padStart(13)}${Math.round(s.meanReadBytes).toLocaleString('en-US').padStart(13)}   ${s.runsBytesPerSecond.map(gb).join(' ')}`,
    );
  const r = d.ratios;
  const goal = (v: number, min: number) =>
    `${v.toFixed(2)} (goal ≥ ${min.toFixed(2)}: ${v >= min ? 'met' : 'NOT met'})`;
  out.push(
    '',
    `adaptive / ${d.summary[0].receiver}: ${goal(r.adaptiveVsC, 0.9)}`,
    r.bestFixed === 'none'
      ? 'adaptive / best fixed: no fixed reader measured'
      : `adaptive / best fixed (${r.bestFixed}): ${goal(r.adaptiveVsBestFixed, 1.0)}; paired per round, median: ${r.pairedAdaptiveVsBestFixed.toFixed(2)}; CPU per byte, ${r.bestFixed} ÷ adaptive: ${r.cpuBestFixedVsAdaptive.toFixed(2)}`,
    ...(r.senderBound
      ? [
          `  sender-bound: the C sender was ≥ ${SENDER_BOUND * 100} % busy through adaptive's and ${r.bestFixed}'s runs, so`,
          "  their rates are the sender's and the rate ratio cannot rank them; CPU per byte can",
        ]
      : []),
    `adaptive framed / adaptive plain: ${goal(r.framedVsPlain, 0.85)}`,
    `CPU per byte, ${d.summary[0].receiver} ÷ adaptive: ${r.cpuCVsAdaptive.toFixed(2)} (the receiver's own cost, whatever the load)`,
    "(× C: best ÷ C's best; paired: the median over rounds of the rate ÷ C's in that round; CPU: the",
    " receiving process, user + system, median over rounds; sender busy: the C sender's CPU ÷ its wall",
    ' time while that receiver drained it, median over rounds)',
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
    const list = receivers(o, cBin);
    const load = [loadavg()];
    const runs: Run[] = [];
    for (let round = 1; round <= o.repeat; round++)
      for (const r of list) {
        const run = await runOnce(o, cBin, dir, r, round);
        log(`round ${round} ${r.name}: ${(run.bytesPerSecond / 1e9).toFixed(2)} GB/s`);
        runs.push(run);
      }
    load.push(loadavg());
    return summarize(o, list, runs, load);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const d = await drainBench(argv, (l) => process.stderr.write(`${l}\n`));
  process.stdout.write(`${argv.includes('--json') ? JSON.stringify(d) : formatTable(d)}\n`);
}
