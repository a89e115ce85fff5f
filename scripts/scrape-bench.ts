// The exporter's scrape at scale (issue 24): a child process opens SOCKETS sockets on loopback (TCP
// listeners, a tenth of them with a pinned receive buffer, connections to them, and UDP sockets with a
// small receive buffer that nobody reads, each sent a few datagrams too many so the kernel drops some,
// and one more twice a second so it keeps dropping),
// then `sockbuf exporter` (dist/, a process of its own) is scraped SCRAPES times per --top value, 1.2 s
// apart (past the exporter's 250 ms sample cache). Reported: each scrape's time and size, the exporter's
// RSS after the scrapes and its peak (VmHWM); and, as the C baseline of the same sock_diag dumps, the
// time `ss -tanmi` and `ss -uanm` take over the same sockets in the same run.
//   npm run build && node --import tsx scripts/scrape-bench.ts [--sockets 10000] [--scrapes 5] [--top 20,10000] [--json]
// The child gets its file limit raised with prlimit (root, or a hard limit high enough); everything it
// opened is closed when it exits, and both children are killed by their pid if the script fails.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listen, type TcpConnection, type TcpServer } from '../src/index.js';
import { SO_RCVBUF, SOCK_DGRAM, SOL_SOCKET } from '../src/sys/constants.js';
import { bindFd, closeFd, createSocket, localEndpoint, setIntOption } from '../src/sys/socket.js';

const { values } = parseArgs({
  options: {
    sockets: { type: 'string', default: '10000' },
    scrapes: { type: 'string', default: '5' },
    top: { type: 'string', default: '20,10000' },
    cli: { type: 'string', default: fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)) },
    json: { type: 'boolean', default: false },
    hold: { type: 'boolean', default: false },
  },
});
const SOCKETS = Number(values.sockets);
if (!(Number.isInteger(SOCKETS) && SOCKETS >= 10 && SOCKETS <= 60_000))
  throw new Error(`--sockets ${values.sockets}: expected a whole number from 10 to 60000`);

/** How SOCKETS splits: a tenth UDP, a hundredth listeners, the rest connections (two sockets each). */
function plan(n: number) {
  const udp = Math.max(1, Math.round(n / 10));
  const listeners = Math.max(1, Math.round(n / 100));
  return { udp, listeners, connections: Math.floor((n - udp - listeners) / 2) };
}

/** The child: opens the sockets, prints one JSON line, holds them until stdin closes, closes them all. */
async function hold(n: number): Promise<void> {
  const p = plan(n);
  const udpFds: number[] = [];
  const udpPorts: number[] = [];
  const servers: TcpServer[] = [];
  const accepted: TcpConnection[] = [];
  const clients: net.Socket[] = [];
  const tx = dgram.createSocket('udp4');
  for (let i = 0; i < p.udp; i++) {
    const fd = createSocket('127.0.0.1', SOCK_DGRAM);
    udpFds.push(fd);
    setIntOption(fd, SOL_SOCKET, SO_RCVBUF, 2048); // the kernel's minimum: a few datagrams fill it
    bindFd(fd, { host: '127.0.0.1', port: 0 });
    const port = localEndpoint(fd)?.port ?? 0;
    udpPorts.push(port);
    for (let k = 0; k < 8; k++) await new Promise((r) => tx.send(Buffer.alloc(1200), port, '127.0.0.1', r));
  }
  for (let i = 0; i < p.listeners; i++) {
    const rcvbuf = i % 10 === 0 ? '64K' : 'auto';
    servers.push(await listen({ port: 0, rcvbuf }, (c) => accepted.push(c)));
  }
  for (let i = 0; i < p.connections; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, p.connections - i) }, (_, k) => {
        const s = servers[(i + k) % servers.length];
        return new Promise<void>((resolve, reject) => {
          const c = net.connect(s.port, '127.0.0.1', resolve);
          c.once('error', reject);
          clients.push(c);
        });
      }),
    );
  }
  while (accepted.length < p.connections) await new Promise((r) => setTimeout(r, 10));
  process.stdout.write(
    `${JSON.stringify({ ready: true, ...p, sockets: p.udp + p.listeners + 2 * p.connections })}\n`,
  );
  // one more datagram to each full UDP socket twice a second: it keeps dropping, so it keeps its series
  const dropping = setInterval(() => {
    for (const port of udpPorts) tx.send(Buffer.alloc(1200), port, '127.0.0.1');
  }, 500);
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  clearInterval(dropping);
  for (const c of clients) c.destroy();
  for (const s of servers) await s.close(true);
  for (const fd of udpFds) closeFd(fd);
  tx.close();
}

/** A child whose stdout lines are read as they come; killed by its pid, never by name. */
function start(file: string, args: string[], stdin: 'pipe' | 'ignore' = 'ignore') {
  const child = spawn(file, args, { stdio: [stdin, 'pipe', 'pipe'] });
  const lines: string[] = [];
  const err: string[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => lines.push(l));
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (l) => err.push(l));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const line = async (pick: (all: string[]) => string | undefined, what: string, seconds = 120) => {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const got = pick([...lines, ...err]);
      if (got !== undefined) return got;
      if (child.exitCode !== null || Date.now() > end)
        throw new Error(`${what}: not ready (${err.slice(-5).join(' | ') || 'no output'})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, line, exited };
}

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

async function scrape(url: string): Promise<{ seconds: number; bytes: number; sockets: number }> {
  const t = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = await res.text();
  const seconds = (performance.now() - t) / 1000;
  if (res.status !== 200) throw new Error(`scrape: HTTP ${res.status}: ${body.slice(0, 200)}`);
  const counted = [...body.matchAll(/^sockbuf_sockets\{protocol="(?:tcp|udp)"\} (\d+)$/gm)];
  return { seconds, bytes: Buffer.byteLength(body), sockets: counted.reduce((a, m) => a + Number(m[1]), 0) };
}

/** The C baseline: ss's own sock_diag dumps of the same sockets, with tcp_info and skmem. */
function ssSeconds(): number {
  const t = performance.now();
  execFileSync('ss', ['-tanmi'], { maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'ignore'] });
  execFileSync('ss', ['-uanm'], { maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'ignore'] });
  return (performance.now() - t) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const scrapes = Number(values.scrapes);
  const tops = values.top.split(',').map(Number);
  const children: ChildProcess[] = [];
  const self = fileURLToPath(import.meta.url);
  const limit = String(SOCKETS + 1024);
  try {
    const holder = start(
      'prlimit',
      [
        `--nofile=${limit}:${limit}`,
        process.execPath,
        '--import',
        'tsx',
        self,
        '--hold',
        '--sockets',
        String(SOCKETS),
      ],
      'pipe',
    );
    children.push(holder.child);
    const ready = JSON.parse(
      await holder.line((a) => a.find((l) => l.startsWith('{"ready"')), 'socket holder'),
    );
    const runs = [];
    for (const top of tops) {
      const exp = start(process.execPath, [
        values.cli,
        'exporter',
        '--listen',
        '127.0.0.1:0',
        '--top',
        String(top),
      ]);
      children.push(exp.child);
      const served = await exp.line((a) => a.find((l) => l.includes('serving http')), 'exporter');
      const url = served.slice(served.indexOf('http'));
      const each = [];
      const ss = [];
      for (let i = 0; i < scrapes; i++) {
        await new Promise((r) => setTimeout(r, 1200));
        each.push(await scrape(url));
        ss.push(ssSeconds());
      }
      const pid = exp.child.pid ?? 0;
      const rssMiB = statusKiB(pid, 'VmRSS') / 1024;
      const peakMiB = statusKiB(pid, 'VmHWM') / 1024;
      exp.child.kill();
      await exp.exited;
      const rest = each.slice(1);
      runs.push({
        top,
        socketsSeen: Math.max(...each.map((e) => e.sockets)),
        firstSeconds: each[0].seconds,
        medianSeconds: median((rest.length ? rest : each).map((e) => e.seconds)),
        maxSeconds: Math.max(...each.map((e) => e.seconds)),
        maxBytes: Math.max(...each.map((e) => e.bytes)),
        ssMedianSeconds: median(ss),
        rssMiB,
        peakRssMiB: peakMiB,
        scrapes: each.map((e) => ({ seconds: e.seconds, bytes: e.bytes })),
      });
    }
    holder.child.stdin?.end();
    await holder.exited;
    const goal = runs.every((r) => r.maxSeconds < 1 && r.maxBytes < 5e6);
    const pids = children.map((c) => c.pid);
    const doc = { sockets: ready, runs, goal: { maxSeconds: 1, maxBytes: 5e6, met: goal }, pids };
    if (values.json) process.stdout.write(`${JSON.stringify(doc)}\n`);
    else {
      process.stdout.write(
        `${ready.sockets} sockets held (${ready.connections} connections, ${ready.listeners} listeners, ${ready.udp} UDP)\n`,
      );
      for (const r of runs)
        process.stdout.write(
          `--top ${r.top}: ${r.socketsSeen} sockets seen; scrape first ${r.firstSeconds.toFixed(3)} s, median ${r.medianSeconds.toFixed(3)} s, max ${r.maxSeconds.toFixed(3)} s` +
            ` (ss -tanmi + ss -uanm: ${r.ssMedianSeconds.toFixed(3)} s, ×${(r.medianSeconds / r.ssMedianSeconds).toFixed(1)});` +
            ` ${(r.maxBytes / 1024).toFixed(1)} KiB; exporter RSS ${r.rssMiB.toFixed(0)} MiB, peak ${r.peakRssMiB.toFixed(0)} MiB\n`,
        );
      process.stdout.write(`goal (every scrape < 1 s and < 5 MB): ${goal ? 'met' : 'NOT met'}\n`);
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

if (values.hold) await hold(SOCKETS);
else await main();
