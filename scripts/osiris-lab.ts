// Seed 000 on osiris itself (issue 43): RabbitMQ stream replication across sockbuf's lab, both of the
// seed's tables. A two-node cluster (scripts/lib/rabbitmq-cluster.ts: Debian's rabbitmq-server, node 1
// in the lab's server namespace, node 2 in the client namespace, fresh nodes for every row), a durable
// stream queue (x-queue-type stream, x-initial-cluster-size 2) declared through node 1, so node 1 leads
// and osiris replicates to node 2 across the lab's link, and npm amqplib publishing to it with confirms
// from node 1's namespace for --seconds per row (128 KiB messages, 64 unconfirmed).
//   table 1: the patched replica modules (seed 000's fix: osiris_replica and osiris_replica_reader
//            rebuilt from the installed beams' debug_info without their recbuf/sndbuf options, erlc,
//            hot-loaded into both nodes) against Debian's pinned osiris, both at rmem_max = wmem_max =
//            229376 (the thread's stock value), alternating, --runs times;
//   table 2: Debian's osiris at rmem_max = wmem_max of each --values (its 229376 row: table 1's runs;
//            --runs 0: table 2 alone, its 229376 row measured for it).
// Per row: MB/s (mean, and the spread of the per-second figures), the replica sockets' rb (follower)
// and tb (leader), the window scale the follower offers, the leader's rwnd- and sndbuf-limited shares
// (mean over the 1 s samples in which it sent), and what `sockbuf inspect` flagged on the replica
// socket in each namespace (its reasons below the tables), the thread's figures beside ours.
//   npm run build && flock /tmp/sockbuf-heavy.lock node --import tsx scripts/osiris-lab.ts \
//     [--seconds 8s] [--runs 3] [--values 229376,512K,1M,4M] [--rtt 2ms] [--kib 128] [--unconfirmed 64] [--json]
// Root, and the exclusive heavy lock held (rmem_max/wmem_max are the host's: changed through
// src/lab/sysctls.ts, originals on disk first; it refuses to start while another live process has a
// change pending, and restores them however it ends). Bounded: each node start 60 s, the join 120 s,
// each publish --seconds (+20 s), the whole run by a deadline. On an error, SIGINT, SIGTERM or SIGHUP
// the nodes, epmds, clients, samplers and the lab are killed by pid and the sysctls restored; after a
// SIGKILL the next run does it first (cleanStale, cleanStaleBrokers). Not part of `sockbuf bench`.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cleanStale, type Lab, withLab } from '../src/lab/lab.js';
import { changeSysctls, liveSysctlChanges, restoreSysctls } from '../src/lab/sysctls.js';
import { parseDuration, parseList, parseSize } from '../src/policy/units.js';
import { readSysctlText } from '../src/sys/sysctl.js';
import { type Measured, measure, type Osiris } from './lib/osiris-measure.js';
import { checks, tables } from './lib/osiris-tables.js';
import { builtCli } from './lib/pinned.js';
import { cleanStaleBrokers, rabbitmqMissing, removeAtExit } from './lib/rabbitmq.js';
import { osirisEbin, osirisUnpinned } from './lib/rabbitmq-cluster.js';

const LOCK = '/tmp/sockbuf-heavy.lock';
const SYSCTLS = ['net.core.rmem_max', 'net.core.wmem_max'];
const STOCK = 229376;

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '8s' },
      runs: { type: 'string', default: '3' },
      values: { type: 'string', default: '229376,512K,1M,4M' },
      rtt: { type: 'string', default: '2ms' },
      kib: { type: 'string', default: '128' },
      unconfirmed: { type: 'string', default: '64' },
      json: { type: 'boolean', default: false },
    },
  });
  const int = (v: string, name: string, lo: number, hi: number) => {
    const n = Number(v);
    if (!(Number.isInteger(n) && n >= lo && n <= hi)) throw new Error(`${name}: ${lo} to ${hi}, got ${v}`);
    return n;
  };
  const seconds = parseDuration(values.seconds, '--seconds');
  if (!(seconds >= 3 && seconds <= 60)) throw new Error(`--seconds: 3s to 60s, got ${values.seconds}`);
  const sysctl = parseList(values.values, '--values', parseSize);
  for (const v of sysctl)
    if (v < 4096 || v > 2 ** 30) throw new Error(`--values: 4096 to 1 GiB each, got ${v}`);
  return {
    seconds,
    runs: int(values.runs, '--runs', 0, 10),
    values: sysctl,
    rttMs: parseDuration(values.rtt, '--rtt') * 1000,
    kib: int(values.kib, '--kib', 1, 65536),
    unconfirmed: int(values.unconfirmed, '--unconfirmed', 1, 10000),
    json: values.json,
  };
}

/** Whether this process or one of its ancestors (flock LOCK cmd) holds LOCK exclusively (/proc/locks). */
function holdsHeavyLock(): boolean {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(LOCK);
  } catch {
    return false;
  }
  const dev = Number(st.dev);
  const major = ((dev >> 8) & 0xfff).toString(16).padStart(2, '0');
  const minor = ((dev & 0xff) | ((dev >> 12) & 0xfff00)).toString(16).padStart(2, '0');
  const id = `${major}:${minor}:${st.ino}`;
  const holders = readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1] === 'FLOCK' && f[3] === 'WRITE' && f[5] === id)
    .map((f) => Number(f[4]));
  for (let pid = process.pid; pid > 1; ) {
    if (holders.includes(pid)) return true;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return false;
}

/** Why this run cannot start here, or undefined. */
function refusal(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (the lab, the host sysctls)';
  const missing = rabbitmqMissing();
  if (missing) return missing;
  if (!holdsHeavyLock())
    return `rmem_max/wmem_max are the host's: run it under the exclusive heavy lock (flock ${LOCK} node --import tsx scripts/osiris-lab.ts …)`;
  const live = liveSysctlChanges();
  if (live.length)
    return `another process's sysctl change is live (${live.map((s) => `pid ${s.pid}: ${Object.keys(s.original).join(' ')}`).join('; ')}): not starting`;
  return undefined;
}

interface Variant {
  osiris: Osiris;
  value: number;
  run: number;
}

function plan(o: ReturnType<typeof options>): Variant[] {
  const out: Variant[] = [];
  for (let run = 1; run <= o.runs; run++)
    for (const osiris of ['patched', 'debian'] as const) out.push({ osiris, value: STOCK, run });
  // table 2's stock row is table 1's Debian runs (with --runs 0: its own)
  for (const value of o.values)
    if (value !== STOCK || o.runs === 0) out.push({ osiris: 'debian', value, run: 1 });
  return out;
}

async function main() {
  const o = options(process.argv.slice(2));
  // what a SIGKILLed run left: its sysctls, its lab and its nodes (before the refusal: a dead change is not live)
  const stale = [...cleanStale(), ...cleanStaleBrokers()];
  if (stale.length) process.stderr.write(`# removed what a killed run left: ${stale.join(', ')}\n`);
  const why = refusal();
  if (why) {
    process.stderr.write(`osiris-lab: ${why}\n`);
    process.exit(2);
  }
  const before = SYSCTLS.map((n) => `${n} = ${readSysctlText(n)}`).join(', ');
  // whatever happens, the sysctls go back (signals end the process; 'exit' then kills the rest by pid)
  process.on('exit', () => restoreSysctls());
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const sig of Object.keys(codes) as (keyof typeof codes)[])
    process.once(sig, () => {
      process.stderr.write(`# ${sig}: tearing down\n`);
      process.exit(codes[sig]);
    });
  const variants = plan(o);
  const deadline = setTimeout(
    () => {
      process.stderr.write('# past the deadline: tearing down\n');
      process.exit(1);
    },
    variants.length * (o.seconds + 240) * 1000,
  );
  deadline.unref();

  const cli = builtCli();
  const { version } = osirisEbin();
  const patched = mkdtempSync(join(tmpdir(), `sockbuf-rabbitmq-${process.pid}-osiris-`));
  removeAtExit(patched);
  const rows: Measured[] = [];
  try {
    const removed = osirisUnpinned(patched);
    process.stderr.write(`# osiris ${version}, patched in ${patched}: ${removed.join('; ')}\n`);
    await withLab({ rttMs: o.rttMs }, async (lab: Lab) => {
      for (const v of variants) {
        process.stderr.write(`# ${v.osiris} osiris, rmem_max = wmem_max = ${v.value}, run ${v.run}\n`);
        changeSysctls(Object.fromEntries(SYSCTLS.map((n) => [n, v.value])));
        const row = await measure(lab, cli, {
          ...o,
          ...v,
          patched: v.osiris === 'patched' ? patched : undefined,
        });
        rows.push(row);
        process.stderr.write(`#   ${row.summary}\n`);
      }
    });
  } finally {
    restoreSysctls();
    rmSync(patched, { recursive: true, force: true });
    clearTimeout(deadline);
  }
  const after = SYSCTLS.map((n) => `${n} = ${readSysctlText(n)}`).join(', ');
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ rows, version })}\n`);
    return;
  }
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  process.stdout.write(
    `${tables(rows, STOCK)}\n\n${checks(rows, STOCK).join('\n')}\n\nosiris ${version}; ${o.rttMs} ms RTT; ${o.kib} KiB messages, ${o.unconfirmed} unconfirmed, ${o.seconds} s per row; sysctls before: ${before}; after: ${after}; load average at the end: ${load}\n`,
  );
}

await main();
