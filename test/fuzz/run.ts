// `npm run fuzz [-- --seconds 60] [--count N] [--seed S] [--first I] [--target NAME] [--hang 5]`
// The long run: every target (or one) for a time or a count, each in a worker watched for hangs.
// A hang or failure prints the seed and index that replay it. Exit 1 when anything failed.
// `npm run fuzz -- --cli [--parallel 4]`: the hostile sweep over every command's options instead
// (test/fuzz/cli-sweep.ts, the built CLI: npm run build first), every option with every hostile value.
// `npm run fuzz -- --peers N [--seed S]`: hostile peers against the running ends instead
// (test/fuzz/peer-sweep.ts): N inputs to serve, sink tcp --iperf3 and sink tcp --verify, 50 N datagrams to sink udp.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type FuzzReport, formatFailures, fuzz } from './harness.js';
import { targetsNamed } from './targets.js';

interface Job {
  target: string;
  seed: string;
  count: number;
  seconds?: number;
  first: number;
  heartbeat: SharedArrayBuffer;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function runJob(job: Job): Promise<FuzzReport | { hungAt: number }> {
  const beat = new Int32Array(job.heartbeat);
  const hangSeconds = Number(arg('hang') ?? 5);
  return new Promise((resolve, reject) => {
    // a worker does not inherit tsx's loader: register it, then load this file as the worker body
    const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
    const worker = new Worker(boot, { eval: true, workerData: job });
    let last = -1;
    let lastChange = Date.now();
    const watch = setInterval(() => {
      const now = Atomics.load(beat, 0);
      if (now !== last) {
        last = now;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > hangSeconds * 1000) {
        clearInterval(watch);
        void worker.terminate();
        resolve({ hungAt: now });
      }
    }, 250);
    worker.once('message', (r: FuzzReport) => {
      clearInterval(watch);
      resolve(r);
    });
    worker.once('error', (e) => {
      clearInterval(watch);
      reject(e);
    });
  });
}

async function cliSweep(): Promise<number> {
  const { cases, sweep } = await import('./cli-sweep.js');
  const all = await cases();
  const r = await sweep(all, Number(arg('parallel') ?? 4), (i) => {
    if (i % 100 === 0) process.stderr.write(`${i}/${all.length}\n`);
  });
  const exits = Object.entries(r.byExit)
    .map(([k, v]) => `exit ${k}: ${v}`)
    .join(', ');
  process.stdout.write(
    `cli sweep: ${r.cases} runs (${new Set(all.map((c) => `${c.command} ${c.option}`)).size} options of ${new Set(all.map((c) => c.command)).size} commands) in ${r.seconds.toFixed(0)} s; ${exits}; ${r.failures.length} failures; namespaces left: ${r.leftoverNetns.length}\n`,
  );
  for (const f of r.failures)
    process.stdout.write(`  ${f.argv.slice(0, 200)}\n    ${f.problems.join('\n    ')}\n`);
  return r.failures.length || r.leftoverNetns.length ? 1 : 0;
}

async function peerSweep(n: number): Promise<number> {
  const { helloSweep, iperf3Sweep, serveSweep, udpSweep } = await import('./peer-sweep.js');
  const seed = arg('seed') ?? `run-${Date.now()}`;
  let failed = 0;
  for (const r of [
    await serveSweep(n, seed),
    await iperf3Sweep(n, seed),
    await udpSweep(50 * n, seed),
    await helloSweep(n, seed),
  ]) {
    process.stdout.write(
      `${r.end}: ${r.inputs} inputs (seed ${seed}) ${JSON.stringify(r.counts)}; ${r.problems.length} problems\n`,
    );
    for (const p of r.problems) process.stdout.write(`  ${p}\n`);
    if (r.problems.length) failed++;
  }
  return failed ? 1 : 0;
}

async function main(): Promise<number> {
  if (process.argv.includes('--cli')) return cliSweep();
  if (arg('peers') !== undefined) return peerSweep(Number(arg('peers')));
  const seed = arg('seed') ?? `run-${Date.now()}`;
  const seconds = arg('seconds') !== undefined ? Number(arg('seconds')) : undefined;
  const count = arg('count') !== undefined ? Number(arg('count')) : seconds === undefined ? 1_000_000 : 1e12;
  const first = Number(arg('first') ?? 0);
  const chosen = targetsNamed(arg('target'));
  const perTarget = seconds === undefined ? undefined : seconds / chosen.length;
  let failed = 0;
  for (const t of chosen) {
    const heartbeat = new SharedArrayBuffer(4);
    const r = await runJob({ target: t.name, seed, count, seconds: perTarget, first, heartbeat });
    if ('hungAt' in r) {
      failed++;
      process.stdout.write(
        `${t.name}: HANG at seed=${seed} index=${r.hungAt}\n  replay: npm run fuzz -- --target ${t.name} --seed ${seed} --first ${r.hungAt} --count 1\n`,
      );
      continue;
    }
    process.stdout.write(
      `${t.name}: ${r.runs} inputs, ${r.rejected} rejected, largest allocation ${r.maxAllocBytes} B, ${r.failures.length} failures (seed ${seed})\n`,
    );
    if (r.failures.length) {
      failed++;
      process.stdout.write(`${formatFailures(r)}\n`);
    }
  }
  return failed ? 1 : 0;
}

if (isMainThread) {
  main().then((code) => {
    process.exitCode = code;
  });
} else {
  const job = workerData as Job;
  const [target] = targetsNamed(job.target).filter((t) => t.name === job.target);
  const beat = new Int32Array(job.heartbeat);
  const report = fuzz(target, {
    seed: job.seed,
    count: job.count,
    seconds: job.seconds,
    first: job.first,
    maxFailures: 20,
    onInput: (i) => Atomics.store(beat, 0, i),
  });
  parentPort?.postMessage(report);
}
