// Etsy's StatsD daemon (the npm package `statsd`, a devDependency) as the third-party node:dgram
// application: started stock, or with `--import sockbuf/dgram/register` so that its require('dgram')
// gets sockbuf/dgram (no change to its code). Its own management interface (TCP, `counters`) says
// what it processed: statsd.packets_received and each metric's sum. Used by scripts/statsd-bench.ts
// and test/scripts/statsd-bench.test.ts.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

/** Stock; stock with sockbuf's receive buffer (8 MiB); with sockbuf/dgram through the preload hook. */
export const VARIANTS = ['node:dgram', 'node:dgram 8MiB', 'sockbuf/dgram'] as const;
export type Variant = (typeof VARIANTS)[number];

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STATS_JS = createRequire(import.meta.url).resolve('statsd/stats.js');
/** How `node` is told to give the application sockbuf/dgram (docs/dgram.md: the preload hook), or a larger buffer. */
export const PRELOAD: Record<Variant, string[]> = {
  'node:dgram': [],
  'node:dgram 8MiB': ['--require', fileURLToPath(new URL('./dgram-rcvbuf.cjs', import.meta.url))],
  'sockbuf/dgram': [
    '--import',
    'sockbuf/dgram/register',
    // diagnosis (issue 35): with SOCKBUF_DGRAM_STATS_LOG=FILE, each socket's stats() every 100 ms
    ...(process.env.SOCKBUF_DGRAM_STATS_LOG
      ? ['--import', fileURLToPath(new URL('./dgram-stats.mjs', import.meta.url))]
      : []),
  ],
};

export interface Statsd {
  variant: Variant;
  pid: number;
  port: number;
  mgmtPort: number;
  child: ChildProcess;
  /** statsd's counters (its management `counters` command), by name. */
  counters(): Promise<Record<string, number>>;
  /** CPU seconds the process has used (all its threads: utime + stime). */
  cpuSeconds(): number;
  /** SIGTERM, then SIGKILL after 2 s; resolves when it has exited. */
  stop(): Promise<void>;
}

/** Sends one management command and returns its text up to END. */
export function mgmt(port: number, command: string, ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1');
    let text = '';
    const t = setTimeout(() => {
      c.destroy();
      reject(new Error(`statsd management: no answer to '${command}' in ${ms} ms`));
    }, ms);
    c.setEncoding('utf8');
    c.on('connect', () => c.write(`${command}\n`));
    c.on('data', (d: string) => {
      text += d;
      if (/^(END|health: \w+)$/m.test(text)) {
        clearTimeout(t);
        c.end();
        resolve(text);
      }
    });
    c.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}

/** `'name': 123,` lines of util.inspect's output (statsd's `counters`), as numbers. */
export function parseCounters(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/'?([\w.;=-]+)'?: (-?[\d.e+]+)/g)) out[m[1]] = Number(m[2]);
  return out;
}

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** utime + stime of process `pid`, in seconds (/proc/PID/stat fields 14 and 15). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/**
 * Starts statsd on 127.0.0.1 (free ports, counters never flushed) with `variant`'s dgram, on `cpu`
 * when given (taskset), at `nice`; resolves once its management interface answers. Killed after
 * `boundSeconds`.
 */
export async function startStatsd(
  variant: Variant,
  dir: string,
  cpu?: number,
  boundSeconds = 120,
  nice = 0,
): Promise<Statsd> {
  const port = await freePort('udp');
  const mgmtPort = await freePort('tcp');
  const config = join(dir, `statsd-${port}.js`);
  writeFileSync(
    config,
    `{ port: ${port}, address: '127.0.0.1', mgmt_port: ${mgmtPort}, mgmt_address: '127.0.0.1', ` +
      `flushInterval: 3600000, backends: [], automaticConfigReload: false }\n`,
  );
  const node = [...PRELOAD[variant], STATS_JS, config];
  const niced = ['nice', '-n', String(nice), process.execPath, ...node];
  const [cmd, args] =
    cpu === undefined ? [niced[0], niced.slice(1)] : ['taskset', ['-c', String(cpu), ...niced]];
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const bound = setTimeout(() => child.kill('SIGKILL'), boundSeconds * 1000);
  void exited.then(() => clearTimeout(bound));
  const pid = child.pid as number;
  const s: Statsd = {
    variant,
    pid,
    port,
    mgmtPort,
    child,
    counters: async () => parseCounters(await mgmt(mgmtPort, 'counters')),
    cpuSeconds: () => cpuSecondsOf(pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(t);
    },
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) break;
    const up = await mgmt(mgmtPort, 'health', 500).catch(() => '');
    if (up.includes('health: up')) return s;
    await sleep(100);
  }
  await s.stop();
  throw new Error(`statsd (${variant}) did not start: ${stderr.slice(-500)}`);
}

/** Polls the counters until packets_received stops moving for `quietMs` (or `maxMs` passed). */
export async function settle(s: Statsd, quietMs = 300, maxMs = 5000): Promise<Record<string, number>> {
  const end = Date.now() + maxMs;
  let last = await s.counters();
  for (;;) {
    await sleep(quietMs);
    const now = await s.counters();
    if (now['statsd.packets_received'] === last['statsd.packets_received'] || Date.now() > end) return now;
    last = now;
  }
}

/** The receive buffer of the UDP socket bound to 127.0.0.1:`port`, as `ss -uam` shows it (rb, bytes). */
export function rcvbufOf(port: number): number | undefined {
  const out = execFileSync('ss', ['-uamnH', 'src', `127.0.0.1:${port}`], { encoding: 'utf8' });
  const m = /rb(\d+)/.exec(out);
  return m ? Number(m[1]) : undefined;
}

/** Builds scripts/c/statsd-send.c into `dir` with gcc; returns the program's path. */
export function buildSender(dir: string): string {
  const out = join(dir, 'statsd-send');
  execFileSync('gcc', [
    '-O2',
    '-Wall',
    '-o',
    out,
    fileURLToPath(new URL('../c/statsd-send.c', import.meta.url)),
  ]);
  return out;
}

/** The sum of the bench.c* counters: every metric line statsd parsed and added up. */
export function benchSum(c: Record<string, number>): number {
  let n = 0;
  for (const [k, v] of Object.entries(c)) if (k.startsWith('bench.c')) n += v;
  return n;
}
