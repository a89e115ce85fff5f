// Seed 000 on its own system, across sockbuf's lab (issue 34, item 5): Debian's rabbitmq-server in the
// lab's server namespace, npm amqplib's publisher (confirms) and consumer (prefetch 64) in the client
// namespace, each in its own process, 256 KiB messages. For each round-trip time and each broker pin
// (tcp_listen_options.recbuf and .sndbuf both set to it, or `auto`: none set), a fresh broker, then
//   publish phase: the publisher alone, --seconds long (or --max queued): publisher → broker;
//   drain phase:   the consumer alone, reading what was queued, --seconds long: broker → consumer.
// During each phase `sockbuf inspect --tcp --json --watch 500ms` runs in BOTH namespaces (the
// broker's host alone, and the clients' host); the table shows the phase's connection as each side
// saw it in the half second it was busiest (the sender's rwnd-/sndbuf-limited shares, sizes, rtt),
// and what inspect flagged on each side: each kind with the share of the phase's samples it flagged
// the connection in (`pinned-sndbuf 9/12 (beam.smp)`). `sockbuf exporter` runs in the broker's namespace too, scraped every
// second through each phase: the kinds its sockbuf_socket_flagged series showed for the broker's
// listener. Then the pinned ÷ autotuned ratios, per round-trip time and direction.
//   npm run build && flock /tmp/sockbuf-heavy.lock node --import tsx scripts/rabbitmq-lab.ts \
//     [--rtt 2ms,10ms] [--pins 16K,128K,auto] [--seconds 8s] [--kib 256] [--max 2GiB] [--json]
// Root (the lab). Bounded: each phase by time and size, each broker start by 60 s; the lab, every
// broker, epmd and client are removed by pid when it ends, fails or is interrupted.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { type Lab, withLab } from '../src/lab/lab.js';
import type { InspectedSocket } from '../src/observe/analyze.js';
import { parseDuration, parseList, parseSize } from '../src/policy/units.js';
import { builtCli } from './lib/pinned.js';
import { type AmqpClient, type ClientResult, labNetns, startBroker, startClient } from './lib/rabbitmq.js';

interface Side {
  /** The socket of the connection on this side, as inspect saw it in this side's namespace. */
  row?: InspectedSocket;
  /** In how many of the samples that held it (of `samples`) each kind flagged it, and its command. */
  flagCounts: Record<string, number>;
  samples: number;
  command?: string;
}

/** How often each kind flagged the connection's socket over the samples of a phase (busy or not). */
function countFlags(samples: InspectedSocket[][], match: (r: InspectedSocket) => boolean): Side {
  const side: Side = { flagCounts: {}, samples: 0 };
  for (const all of samples) {
    const row = all.find(match);
    if (!row) continue;
    side.samples++;
    side.command ??= row.command;
    for (const kind of new Set(row.flags.map((f) => f.kind)))
      side.flagCounts[kind] = (side.flagCounts[kind] ?? 0) + 1;
  }
  return side;
}

interface Phase {
  result?: ClientResult;
  error?: string;
  /** The broker's socket (server namespace) and the client's (client namespace). */
  broker: Side;
  client: Side;
  /** Everything inspect flagged in each namespace during the phase: "kind (command)" each. */
  flaggedServer: string[];
  flaggedClient: string[];
  /** What `sockbuf exporter` in the broker's namespace said of the broker's listener series. */
  exporter: string[];
}

interface Row {
  rttMs: number;
  pin: number | 'auto';
  publish: Phase;
  drain: Phase;
}

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rtt: { type: 'string', default: '2ms,10ms' },
      pins: { type: 'string', default: '16K,128K,auto' },
      seconds: { type: 'string', default: '8s' },
      kib: { type: 'string', default: '256' },
      max: { type: 'string', default: '2GiB' },
      json: { type: 'boolean', default: false },
    },
  });
  const kib = Number(values.kib);
  if (!(Number.isInteger(kib) && kib > 0 && kib <= 65536))
    throw new Error(`--kib: 1 to 65536, got ${values.kib}`);
  const seconds = parseDuration(values.seconds, '--seconds');
  if (!(seconds >= 2 && seconds <= 60)) throw new Error(`--seconds: 2s to 60s, got ${values.seconds}`);
  return {
    rtts: parseList(values.rtt, '--rtt', parseDuration).map((s) => s * 1000),
    pins: parseList(values.pins, '--pins', (v, o) => (v === 'auto' ? ('auto' as const) : parseSize(v, o))),
    seconds,
    kib,
    maxMessages: Math.max(1, Math.floor(parseSize(values.max, '--max') / (kib * 1024))),
    json: values.json,
  };
}

/** A sampler: `sockbuf inspect --watch` in a host of the lab, every TCP socket there each interval. */
function watchIn(lab: Lab, host: 'client' | 'server', cli: string, intervalMs: number, count: number) {
  const samples: InspectedSocket[][] = [];
  const child = lab.spawn(host, [
    process.execPath,
    cli,
    'inspect',
    '--tcp',
    '--json',
    '--watch',
    `${intervalMs}ms`,
    '--count',
    String(count),
  ]);
  child.onLine((l) => {
    if (l.startsWith('{')) samples.push((JSON.parse(l) as { sockets: InspectedSocket[] }).sockets);
  });
  const bound = setTimeout(() => child.signal('SIGKILL'), count * intervalMs + 30_000);
  return {
    samples,
    async stop() {
      clearTimeout(bound);
      await child.stop();
    },
  };
}

const flagged = (rows: InspectedSocket[]) =>
  rows.filter((r) => r.flags.length).flatMap((r) => r.flags.map((f) => `${f.kind} (${r.command ?? '?'})`));

/**
 * The sample in which the connection was busiest on this side (so a phase shorter than the sampler's
 * start-up, or one that ends mid-interval, still shows its busy second); its other flagged sockets.
 */
function busiest(samples: InspectedSocket[][], match: (r: InspectedSocket) => boolean) {
  let best: { row: InspectedSocket; all: InspectedSocket[] } | undefined;
  for (const all of samples) {
    const row = all.find(match);
    if (row && (row.busyMs ?? 0) > (best?.row.busyMs ?? -1)) best = { row, all };
  }
  return best;
}

/**
 * The broker's listener series as `sockbuf exporter` (in the server namespace) shows them: each
 * sockbuf_socket_flagged kind with the owner's command, e.g. `pinned-sndbuf (beam.smp)`.
 */
function exporterFlags(metrics: string, port: number): string[] {
  const mine = metrics
    .split('\n')
    .filter((l) => l.includes(`role="listener"`) && l.includes(`port="${port}"`) && !l.startsWith('#'));
  const command = mine
    .map((l) => /^sockbuf_socket_owner_info\{.*command="([^"]*)"/.exec(l)?.[1])
    .find(Boolean);
  return mine.flatMap((l) => {
    const m = /^sockbuf_socket_flagged\{.*kind="([^"]+)".*\} 1$/.exec(l);
    return m ? [`${m[1]} (${command ?? '?'})`] : [];
  });
}

/**
 * One phase: inspect starts sampling in both namespaces, the client starts; when the client is done,
 * the sample where the connection was busiest on each side.
 */
async function phase(lab: Lab, cli: string, seconds: number, start: () => AmqpClient, brokerPort: number) {
  const none = () => ({ flagCounts: {}, samples: 0 });
  const out: Phase = { broker: none(), client: none(), flaggedServer: [], flaggedClient: [], exporter: [] };
  const intervalMs = 500;
  const count = Math.ceil(((seconds + 15) * 1000) / intervalMs);
  const server = watchIn(lab, 'server', cli, intervalMs, count);
  const client = watchIn(lab, 'client', cli, intervalMs, count);
  const c = start();
  let localPort = -1;
  // Prometheus's view: the exporter in the broker's namespace scraped every second while the client runs
  let running = true;
  const seen = new Set<string>();
  const scraping = (async () => {
    while (running) {
      const r = await lab.exec(
        'server',
        ['curl', '-s', '--max-time', '3', `http://127.0.0.1:${EXPORTER_PORT}/metrics`],
        {
          timeoutMs: 5000,
        },
      );
      for (const f of exporterFlags(r.stdout, brokerPort)) seen.add(f);
      await new Promise((res) => setTimeout(res, 1000));
    }
  })();
  try {
    localPort = (await c.ready).localPort;
    out.result = await c.done;
  } catch (err) {
    out.error = (err as Error).message.split('\n')[0];
    await c.stop();
  }
  running = false;
  await Promise.all([server.stop(), client.stop(), scraping]);
  out.exporter = [...seen];
  const atBroker = (r: InspectedSocket) => r.localPort === brokerPort && r.remotePort === localPort;
  const atClient = (r: InspectedSocket) => r.localPort === localPort && r.remotePort === brokerPort;
  const b = busiest(server.samples, atBroker);
  const k = busiest(client.samples, atClient);
  out.broker = { ...countFlags(server.samples, atBroker), row: b?.row };
  out.client = { ...countFlags(client.samples, atClient), row: k?.row };
  out.flaggedServer = flagged(b?.all ?? []);
  out.flaggedClient = flagged(k?.all ?? []);
  return out;
}

/** Where `sockbuf exporter` listens in the server namespace (its own loopback). */
const EXPORTER_PORT = 9477;

async function variant(lab: Lab, cli: string, o: ReturnType<typeof options>, pin: number | 'auto') {
  const info = lab.info;
  const clientWrap = labNetns(info, 'client');
  const port = 5672;
  const broker = await startBroker({
    address: info.hosts.server.ipv4,
    port,
    wrap: labNetns(info, 'server'),
    ...(pin === 'auto' ? {} : { recbuf: pin, sndbuf: pin }),
  });
  const exporter = lab.spawn('server', [
    process.execPath,
    cli,
    'exporter',
    '--listen',
    `127.0.0.1:${EXPORTER_PORT}`,
    '--top',
    '100',
    '--no-host-counters',
  ]);
  try {
    // it answers once it serves (its 'serving' line goes to stderr)
    for (let i = 0; ; i++) {
      const r = await lab.exec(
        'server',
        ['curl', '-sf', '--max-time', '2', `http://127.0.0.1:${EXPORTER_PORT}/metrics`],
        {
          timeoutMs: 5000,
        },
      );
      if (r.code === 0) break;
      if (i >= 30 || !exporter.running)
        throw new Error(`sockbuf exporter did not start: ${exporter.describeExit()}`);
      await new Promise((res) => setTimeout(res, 1000));
    }
    const queue = 'seed000';
    const common = { url: broker.url, queue, kib: o.kib, seconds: o.seconds, wrap: clientWrap };
    const publish = await phase(
      lab,
      cli,
      o.seconds,
      () => startClient('publish', { ...common, count: o.maxMessages }),
      port,
    );
    const queued = publish.result?.messages ?? 0;
    const drain =
      queued > 0
        ? await phase(lab, cli, o.seconds, () => startClient('consume', { ...common, count: queued }), port)
        : {
            broker: { flagCounts: {}, samples: 0 },
            client: { flagCounts: {}, samples: 0 },
            flaggedServer: [],
            flaggedClient: [],
            exporter: [],
            error: 'nothing queued',
          };
    return { publish, drain };
  } finally {
    await exporter.stop();
    await broker.stop();
  }
}

const mb = (p: Phase) => (p.result ? p.result.MBps.toFixed(1) : `— (${p.error ?? '?'})`);
const share = (r: InspectedSocket | undefined, k: 'rwndLimitedPct' | 'sndbufLimitedPct') =>
  r?.[k] === undefined ? '—' : `${r[k]}`;
/** `pinned-sndbuf 9/12 (beam.smp)`: the kinds that flagged the socket, in how many of its samples. */
const kinds = (side: Side) => {
  if (!side.samples) return '—';
  const ks = Object.entries(side.flagCounts).map(([k, n]) => `${k} ${n}/${side.samples}`);
  return ks.length ? `${ks.join(', ')} (${side.command ?? '?'})` : `nothing in ${side.samples}`;
};
const listed = (xs: string[]) => (xs.length ? xs.join(', ') : 'nothing');
const size = (n: number | undefined) => (n === undefined ? '—' : `${Math.round(n / 1024)}K`);

function table(rows: Row[]): string {
  const head = [
    '| RTT | broker pin | publish MB/s | publisher rwnd-lim % | broker rb | inspect, broker host | exporter, broker host | inspect, client host | drain MB/s | broker sndbuf-lim % | broker Send-Q / tb | broker rtt ms | inspect, broker host | exporter, broker host | inspect, client host |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  return [
    ...head,
    ...rows.map((r) => {
      const p = r.publish;
      const d = r.drain;
      return `| ${r.rttMs} ms | ${r.pin === 'auto' ? 'autotuned' : size(r.pin)} | ${mb(p)} | ${share(p.client.row, 'rwndLimitedPct')} | ${size(p.broker.row?.rcvbufBytes)} | ${kinds(p.broker)} | ${listed(p.exporter)} | ${kinds(p.client)} | ${mb(d)} | ${share(d.broker.row, 'sndbufLimitedPct')} | ${size(d.broker.row?.sendQueueBytes ?? d.broker.row?.wmemBytes)} / ${size(d.broker.row?.sndbufBytes)} | ${d.broker.row?.rttUs === undefined ? '—' : (d.broker.row.rttUs / 1000).toFixed(1)} | ${kinds(d.broker)} | ${listed(d.exporter)} | ${kinds(d.client)} |`;
    }),
  ].join('\n');
}

function ratios(rows: Row[]): string[] {
  const out: string[] = [];
  for (const rtt of [...new Set(rows.map((r) => r.rttMs))]) {
    const auto = rows.find((r) => r.rttMs === rtt && r.pin === 'auto');
    if (!auto) continue;
    for (const r of rows.filter((x) => x.rttMs === rtt && x.pin !== 'auto')) {
      const f = (a?: ClientResult, b?: ClientResult) =>
        a && b && a.MBps > 0 ? `${(b.MBps / a.MBps).toFixed(1)} ×` : '—';
      out.push(
        `${rtt} ms, pinned ${size(r.pin as number)}: autotuned ÷ pinned = ${f(r.publish.result, auto.publish.result)} publishing, ${f(r.drain.result, auto.drain.result)} draining`,
      );
    }
  }
  return out;
}

async function main() {
  const o = options(process.argv.slice(2));
  const cli = builtCli();
  const rows: Row[] = [];
  for (const rttMs of o.rtts) {
    await withLab({ rttMs }, async (lab) => {
      for (const pin of o.pins) {
        process.stderr.write(`# ${rttMs} ms, ${pin === 'auto' ? 'autotuned' : `pinned ${pin}`}\n`);
        const { publish, drain } = await variant(lab, cli, o, pin);
        const row = { rttMs, pin, publish, drain };
        rows.push(row);
        process.stderr.write(`${table([row]).split('\n').slice(2).join('\n')}\n`);
        process.stderr.write(
          `#   flagged in the server namespace: publish [${publish.flaggedServer.join('; ')}], drain [${drain.flaggedServer.join('; ')}]\n`,
        );
      }
    });
  }
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ rows })}\n`);
    return;
  }
  // two CPUs carry the broker, both clients, the delay line and the samplers: the load says how busy
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  process.stdout.write(`${table(rows)}\n\n${ratios(rows).join('\n')}\nload average at the end: ${load}\n`);
}

await main();
