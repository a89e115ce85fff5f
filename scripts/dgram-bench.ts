// Issue 35's benchmark: what a sockbuf/dgram socket costs against a node:dgram socket, measured in the
// same run, each implementation in a fresh child process (the built package: npm run build first).
//   sockets  N sockets bound on loopback, each with a 'message' listener and one datagram received:
//            RSS added over the process before them (MiB), and per socket (KiB)
//   first    bind, then a datagram sent at once from a peer: milliseconds until 'message' (200 times)
//   echo     open a socket, send a query to a local echo server (C, scripts/c/udp.c echo, on the
//            other CPU: a far end that never pauses for a GC or a compile), receive the answer,
//            close and wait for 'close': 1 000 times in a row; --repeat pairs in alternating order,
//            the median of each implementation's figures. --echo-cpus any,one: the client free to
//            run on both CPUs, as an application runs, and then pinned to one CPU with all its
//            threads (there V8's concurrent compiler takes the event loop's CPU for up to ~5 ms at a
//            time, for node:dgram too: docs/dgram.md)
//   overload a request/response server (1 ms of work each) on CPU 1 driven at 3 × its capacity by a
//            client on CPU 0 (nice −10 as root): each answer's delay at the client, and at the server
//            the wait from the client's send to the start of the work (wall clock on both ends)
//   cpu      a receiver on CPU 1 fed by the C sender (scripts/c/statsd-send.c) on CPU 0 at each rate:
//            the receiver's utime + stime per datagram received; --repeat pairs in alternating order,
//            the median of each implementation's
// Run it under the team's heavy lock:
//   flock /tmp/sockbuf-heavy.lock node --import tsx scripts/dgram-bench.ts [--sockets 1000]
//     [--echo 1000] [--echo-cpus any,one] [--rates 1k,10k,40k] [--seconds 3] [--repeat 3]
//     [--only sockets,first,echo,cpu,overload] [--json FILE]
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildC, type Line, num, runPinned } from './lib/pinned.js';
import { buildSender, cpuSecondsOf } from './lib/statsd.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const IMPLS = ['node:dgram', 'sockbuf/dgram'] as const;
type Impl = (typeof IMPLS)[number];

const { values } = parseArgs({
  options: {
    child: { type: 'string' },
    impl: { type: 'string' },
    n: { type: 'string' },
    server: { type: 'string' },
    sockets: { type: 'string', default: '1000' },
    echo: { type: 'string', default: '1000' },
    rates: { type: 'string', default: '1k,10k,40k' },
    seconds: { type: 'string', default: '3' },
    repeat: { type: 'string', default: '3' },
    only: { type: 'string', default: 'sockets,first,echo,cpu,overload' },
    work: { type: 'string', default: '1' },
    'max-delay': { type: 'string', default: '50' },
    rate: { type: 'string' },
    json: { type: 'string' },
    'echo-cpus': { type: 'string', default: 'any,one' },
  },
});

type Dgram = typeof import('node:dgram');
async function load(impl: string): Promise<Dgram> {
  if (impl === 'node:dgram') return (await import('node:dgram')).default;
  return (await import(join(ROOT, 'dist/dgram.js'))).default as unknown as Dgram;
}
const out = (l: Line) => process.stdout.write(`${JSON.stringify(l)}\n`);
const nowMs = () => performance.now();
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const bound = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([
    p,
    new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`${what}: nothing in ${ms} ms`)), ms)),
  ]);

// ---- children ----

async function childSockets(d: Dgram, n: number): Promise<void> {
  const peer = d === (await load('node:dgram')) ? d : await load('node:dgram');
  const sender = peer.createSocket('udp4');
  await new Promise<void>((r) => sender.bind(0, '127.0.0.1', r));
  global.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  const before = process.memoryUsage().rss;
  const socks: import('node:dgram').Socket[] = [];
  let got = 0;
  for (let i = 0; i < n; i++) {
    const s = d.createSocket('udp4', () => got++);
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    socks.push(s);
  }
  for (const s of socks) sender.send('x', s.address().port, '127.0.0.1');
  const end = Date.now() + 10_000;
  while (got < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  global.gc?.();
  const after = process.memoryUsage().rss;
  out({ kind: 'sockets', n, received: got, rssMiB: (after - before) / 2 ** 20 });
  for (const s of socks) s.close();
  sender.close();
}

async function childFirst(d: Dgram, n: number): Promise<void> {
  const node = await load('node:dgram');
  const sender = node.createSocket('udp4');
  await new Promise<void>((r) => sender.bind(0, '127.0.0.1', r));
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = d.createSocket('udp4');
    const got = new Promise<number>((r) => s.once('message', () => r(nowMs())));
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    const t0 = nowMs();
    sender.send('q', s.address().port, '127.0.0.1');
    ms.push((await bound(got, 5000, 'first datagram')) - t0);
    await new Promise<void>((r) => s.close(r));
  }
  out({ kind: 'first', n, medianMs: quantile(ms, 0.5), p99Ms: quantile(ms, 0.99), maxMs: Math.max(...ms) });
  sender.close();
}

async function childEcho(d: Dgram, n: number, server: number): Promise<void> {
  // --echo-cpus any: as an application runs, free to use both CPUs (the child starts pinned to CPU 1);
  // one: all its threads on CPU 1, the event loop and V8's own (its concurrent compiler, GC helpers)
  if (values['echo-cpus'] === 'any') execFileSync('taskset', ['-a', '-p', '-c', '0,1', String(process.pid)]);
  const ms: number[] = [];
  const closeMs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    const s = d.createSocket('udp4');
    const answer = new Promise<void>((r) => s.once('message', () => r()));
    s.send('query', server, '127.0.0.1');
    await bound(answer, 5000, 'echo answer');
    const t1 = nowMs();
    await new Promise<void>((r) => s.close(r));
    const t2 = nowMs();
    ms.push(t2 - t0);
    closeMs.push(t2 - t1);
  }
  out({
    kind: 'echo',
    n,
    medianMs: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    maxMs: Math.max(...ms),
    closeMedianMs: quantile(closeMs, 0.5),
    closeP99Ms: quantile(closeMs, 0.99),
    over2Ms: ms.filter((x) => x > 2).length,
  });
}

/** A request/response server that spends `work` ms of CPU on each request (its capacity: 1000/work a second). */
async function childRrServer(d: Dgram, work: number, maxQueueDelay: number): Promise<void> {
  // how long each request waited from the client's send to the start of its work (wall clock, both ends)
  const waited: number[] = [];
  const s = d.createSocket({ type: 'udp4', maxQueueDelay } as import('node:dgram').SocketOptions, (m, r) => {
    const t = nowMs();
    waited.push(performance.timeOrigin + t - m.readDoubleLE(8));
    while (nowMs() - t < work);
    s.send(m, r.port, r.address);
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  process.on('SIGUSR2', () => {
    const st = (s as unknown as { stats?: () => Record<string, unknown> }).stats?.();
    out({
      kind: 'rr-stats',
      ...(st ?? {}),
      waitedMedianMs: quantile(waited, 0.5),
      waitedP99Ms: quantile(waited, 0.99),
      waitedMaxMs: Math.max(...waited),
    });
  });
  out({ kind: 'rr-server', port: s.address().port });
}

/** Sends `rate` requests a second for `seconds`, each stamped; the answers' delays. */
async function childRrClient(server: number, rate: number, seconds: number): Promise<void> {
  // above the host's other work (as root), so that its own late wake-ups count as little as they can
  try {
    setPriority(-10);
  } catch {}
  const node = await load('node:dgram');
  const c = node.createSocket('udp4');
  const delays: number[] = [];
  c.on('message', (m) => delays.push(nowMs() - m.readDoubleLE(0)));
  await new Promise<void>((r) => c.bind(0, '127.0.0.1', r));
  const total = Math.round(rate * seconds);
  const t0 = nowMs();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((nowMs() - t0) * rate) / 1000));
    for (; sent < due; sent++) {
      const b = Buffer.alloc(64);
      const t = nowMs();
      b.writeDoubleLE(t, 0);
      b.writeDoubleLE(performance.timeOrigin + t, 8);
      c.send(b, server, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 1500));
  out({
    kind: 'rr-client',
    sent,
    answered: delays.length,
    medianMs: quantile(delays, 0.5),
    p99Ms: quantile(delays, 0.99),
    maxMs: Math.max(...delays),
  });
  c.close();
}

async function childRecv(d: Dgram): Promise<void> {
  let got = 0;
  const s = d.createSocket('udp4', () => got++);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  process.on('SIGUSR2', () => {
    const st = (s as unknown as { stats?: () => Record<string, unknown> }).stats?.();
    out({
      kind: 'received',
      received: got,
      ...(st ? { mode: st.mode, handovers: st.handovers, kernelDrops: st.kernelDrops } : {}),
    });
  });
  out({ kind: 'port', port: s.address().port });
}

// ---- parent ----

function child(kind: string, impl: Impl, extra: string[] = [], cpu = 1) {
  return runPinned(
    cpu,
    process.execPath,
    ['--expose-gc', '--import', 'tsx', SELF, '--child', kind, '--impl', impl, ...extra],
    300,
  );
}

async function runChild(kind: string, impl: Impl, extra: string[] = []): Promise<Line> {
  const c = child(kind, impl, extra);
  const l = await c.line((x) => x.kind === kind, 280_000);
  await c.exited;
  return l;
}

const rate = (s: string) => {
  const m = /^(\d+(?:\.\d+)?)([kK]?)$/.exec(s.trim());
  if (!m) throw new Error(`--rates: '${s}' is not a rate (e.g. 10k)`);
  return Math.round(Number(m[1]) * (m[2] ? 1000 : 1));
};

async function parent(): Promise<void> {
  const only = new Set(values.only.split(','));
  const results: Line[] = [];
  const load1 = () => loadavg()[0].toFixed(1);
  const report = (what: string, l: Record<Impl, Line>, key: string, unit: string) => {
    const a = num(l['node:dgram'], key);
    const b = num(l['sockbuf/dgram'], key);
    const line = { what, key, node: a, sockbuf: b, ratio: b / a, diff: b - a, load: load1() };
    results.push(line);
    console.log(
      `${what} ${key}: node:dgram ${a.toFixed(3)} ${unit}, sockbuf/dgram ${b.toFixed(3)} ${unit} (÷ ${(b / a).toFixed(2)}, Δ ${(b - a).toFixed(3)}) load ${line.load}`,
    );
  };
  if (only.has('sockets')) {
    const l = {} as Record<Impl, Line>;
    for (const impl of IMPLS) l[impl] = await runChild('sockets', impl, ['--n', values.sockets]);
    report(`${values.sockets} sockets`, l, 'rssMiB', 'MiB');
    for (const impl of IMPLS) console.log(`  ${impl} received ${l[impl].received}/${values.sockets}`);
  }
  if (only.has('first')) {
    const l = {} as Record<Impl, Line>;
    for (const impl of IMPLS) l[impl] = await runChild('first', impl, ['--n', '200']);
    for (const k of ['medianMs', 'p99Ms', 'maxMs']) report('first datagram after bind', l, k, 'ms');
  }
  if (only.has('echo')) {
    const dir = mkdtempSync(join(tmpdir(), 'sockbuf-dgram-bench-'));
    const server = runPinned(0, buildC(dir), ['echo', '0'], 600);
    try {
      const port = num(await server.line((x) => 'port' in x), 'port');
      try {
        setPriority(server.child.pid as number, -10); // the fixture answers before other work on its CPU
      } catch {} // not root: as it is
      for (const cpus of values['echo-cpus'].split(',')) {
        const runs: Record<Impl, Line[]> = { 'node:dgram': [], 'sockbuf/dgram': [] };
        const args = ['--n', values.echo, '--server', String(port), '--echo-cpus', cpus];
        for (let rep = 0; rep < Number(values.repeat); rep++)
          for (const impl of rep % 2 ? [...IMPLS].reverse() : IMPLS)
            runs[impl].push(await runChild('echo', impl, args));
        const l = {} as Record<Impl, Line>;
        for (const impl of IMPLS) {
          l[impl] = {};
          for (const [k, v] of Object.entries(runs[impl][0]))
            if (typeof v === 'number')
              l[impl][k] = quantile(
                runs[impl].map((x) => num(x, k)),
                0.5,
              );
          const each = runs[impl].map((x) => num(x, 'p99Ms').toFixed(2));
          console.log(`  ${impl}, client on ${cpus} CPU: p99 of each run ${each.join(', ')} ms`);
        }
        for (const k of ['medianMs', 'p99Ms', 'maxMs', 'over2Ms', 'closeMedianMs', 'closeP99Ms'])
          report(
            `open/query/answer/close ×${values.echo}, client on ${cpus} CPU`,
            l,
            k,
            k === 'over2Ms' ? '' : 'ms',
          );
      }
    } finally {
      server.child.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  if (only.has('cpu')) {
    const dir = mkdtempSync(join(tmpdir(), 'sockbuf-dgram-bench-'));
    try {
      const sender = buildSender(dir);
      for (const r of values.rates.split(',').map(rate)) {
        const us: Record<Impl, number[]> = { 'node:dgram': [], 'sockbuf/dgram': [] };
        // --repeat pairs, each in the other order than the last: the median of each is reported
        for (let rep = 0; rep < Number(values.repeat); rep++)
          for (const impl of rep % 2 ? [...IMPLS].reverse() : IMPLS) {
            const c = child('recv', impl);
            const port = num(await c.line((x) => x.kind === 'port'), 'port');
            const pid = c.child.pid as number;
            const count = Math.round(r * Number(values.seconds));
            await new Promise((res) => setTimeout(res, 1000)); // what starts once has started
            const cpu0 = cpuSecondsOf(pid);
            const send = runPinned(0, sender, [String(port), String(r), String(count), '16'], 120);
            await send.line((x) => 'sent' in x, 110_000);
            await new Promise((res) => setTimeout(res, 300));
            const cpu1 = cpuSecondsOf(pid);
            c.child.kill('SIGUSR2');
            const got = await c.line((x) => x.kind === 'received');
            c.child.kill();
            await once(c.child, 'close');
            const received = num(got, 'received');
            us[impl].push(((cpu1 - cpu0) * 1e6) / received);
            console.log(
              `  ${impl} at ${r}/s: ${received}/${count} received, ${us[impl].at(-1)?.toFixed(2)} µs CPU each ${got.mode ? `(mode ${got.mode}, ${got.handovers} hand-overs)` : ''}`,
            );
          }
        const l = {} as Record<Impl, Line>;
        for (const impl of IMPLS) l[impl] = { usPerDatagram: quantile(us[impl], 0.5) };
        report(`receive at ${r}/s`, l, 'usPerDatagram', 'µs CPU/datagram');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (only.has('overload')) {
    // capacity 1000/work requests a second; driven at 3 × that. node:dgram has no queue bound.
    const work = Number(values.work);
    const r = Math.round((3 * 1000) / work);
    for (const [impl, delay] of [
      ['node:dgram', 0],
      ['sockbuf/dgram', 0],
      ['sockbuf/dgram', Number(values['max-delay'])],
    ] as const) {
      const srv = child('rr-server', impl, ['--work', String(work), '--max-delay', String(delay)], 1);
      const port = num(await srv.line((x) => x.kind === 'rr-server'), 'port');
      const cl = child('rr-client', 'node:dgram', ['--server', String(port), '--rate', String(r)], 0);
      const res = await cl.line((x) => x.kind === 'rr-client', 60_000);
      srv.child.kill('SIGUSR2');
      const st = await srv.line((x) => x.kind === 'rr-stats');
      srv.child.kill();
      const line = {
        what: `request/response at 3 × capacity (${r}/s, ${work} ms each)`,
        impl,
        maxQueueDelay: delay,
        ...res,
        serverWaitedMedianMs: st.waitedMedianMs,
        serverWaitedP99Ms: st.waitedP99Ms,
        serverWaitedMaxMs: st.waitedMaxMs,
        stale: st.stale,
        kernelDrops: st.kernelDrops,
        mode: st.mode,
        load: load1(),
      };
      results.push(line);
      console.log(
        `overload ${impl}${delay ? ` maxQueueDelay ${delay} ms` : ''}: answered ${res.answered}/${res.sent}, delay median ${num(res, 'medianMs').toFixed(1)} ms, p99 ${num(res, 'p99Ms').toFixed(1)} ms, max ${num(res, 'maxMs').toFixed(1)} ms${st.stale !== undefined ? `, stale ${st.stale}, kernel drops ${st.kernelDrops}` : ''}; server side (send to start of work) median ${num(st, 'waitedMedianMs').toFixed(1)} ms, p99 ${num(st, 'waitedP99Ms').toFixed(1)} ms, max ${num(st, 'waitedMaxMs').toFixed(1)} ms; load ${line.load}`,
      );
    }
  }
  if (values.json) writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
}

async function main(): Promise<void> {
  if (!values.child) return parent();
  const d = await load(values.impl ?? 'node:dgram');
  const n = Number(values.n ?? 0);
  if (values.child === 'sockets') return childSockets(d, n);
  if (values.child === 'first') return childFirst(d, n);
  if (values.child === 'echo') return childEcho(d, n, Number(values.server));
  if (values.child === 'recv') return childRecv(d);
  if (values.child === 'rr-server') return childRrServer(d, Number(values.work), Number(values['max-delay']));
  if (values.child === 'rr-client') return childRrClient(Number(values.server), Number(values.rate), 3);
  throw new Error(`--child: unknown '${values.child}'`);
}

await main();
