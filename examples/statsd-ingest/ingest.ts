// A StatsD-style metrics ingest on sockbuf's batched UDP receiver: what a Node service would write to
// take metrics from StatsD clients (hot-shots, statsd-client, Telegraf) without losing them in bursts.
// Each datagram holds one or more lines `name:value|type[|@rate][|#tags]` (c counter, g gauge,
// ms/h/d timer or histogram, s set); the ingest adds them up in memory.
//
//   import { startIngest } from './ingest.js';
//   const ingest = await startIngest({ listen: '127.0.0.1:8125' });
//   setInterval(() => console.log(ingest.metrics.counters), 10_000);
//
// startDgramIngest() is the same ingest on node:dgram, for the speed comparison (bench.ts).
import dgram from 'node:dgram';
import { createUdpReceiver, type UdpReceiverOptions } from 'sockbuf';

export interface Metrics {
  counters: Map<string, number>;
  gauges: Map<string, number>;
  timers: Map<string, { count: number; sum: number; min: number; max: number }>;
  sets: Map<string, Set<string>>;
  /** Datagrams and metric lines taken, and lines that did not parse. */
  datagrams: number;
  lines: number;
  bad: number;
}

export function emptyMetrics(): Metrics {
  return {
    counters: new Map(),
    gauges: new Map(),
    timers: new Map(),
    sets: new Map(),
    datagrams: 0,
    lines: 0,
    bad: 0,
  };
}

/** Adds one metric line (`name:value|type|@rate|#tags`) to `m`. */
export function addLine(m: Metrics, line: string): void {
  const colon = line.indexOf(':');
  const bar = line.indexOf('|', colon);
  if (colon <= 0 || bar < 0) {
    m.bad++;
    return;
  }
  const name = line.slice(0, colon);
  const raw = line.slice(colon + 1, bar);
  const rest = line.slice(bar + 1).split('|');
  const type = rest[0];
  const rateField = rest.find((f) => f.startsWith('@'));
  const rate = rateField ? Number(rateField.slice(1)) : 1;
  const value = Number(raw);
  m.lines++;
  if (type === 's') {
    const s = m.sets.get(name) ?? new Set<string>();
    m.sets.set(name, s);
    s.add(raw);
  } else if (Number.isNaN(value) || !(rate > 0)) {
    m.lines--;
    m.bad++;
  } else if (type === 'c') m.counters.set(name, (m.counters.get(name) ?? 0) + value / rate);
  else if (type === 'g') {
    // a signed gauge value changes the gauge; a plain one sets it
    const delta = raw.startsWith('+') || raw.startsWith('-');
    m.gauges.set(name, delta ? (m.gauges.get(name) ?? 0) + value : value);
  } else if (type === 'ms' || type === 'h' || type === 'd') {
    const t = m.timers.get(name) ?? { count: 0, sum: 0, min: value, max: value };
    t.count++;
    t.sum += value;
    t.min = Math.min(t.min, value);
    t.max = Math.max(t.max, value);
    m.timers.set(name, t);
  } else {
    m.lines--;
    m.bad++;
  }
}

/** Adds every line of one datagram. */
export function addDatagram(m: Metrics, data: Buffer, start: number, end: number): void {
  m.datagrams++;
  for (const line of data.toString('utf8', start, end).split('\n')) if (line) addLine(m, line);
}

export interface Ingest {
  port: number;
  metrics: Metrics;
  /** Stops taking datagrams; resolves once what was taken is added up. */
  close(): Promise<void>;
}

/** The ingest on sockbuf: one batch of datagrams per step of the loop. */
export async function startIngest(
  options: Partial<UdpReceiverOptions> & { listen: string },
): Promise<Ingest> {
  const rx = await createUdpReceiver({ gro: false, ...options });
  const metrics = emptyMetrics();
  const loop = (async () => {
    for await (const b of rx) {
      for (let i = 0; i < b.count; i++)
        addDatagram(metrics, b.data, b.offsets[i], b.offsets[i] + b.lengths[i]);
    }
  })();
  await rx.start();
  return {
    port: rx.port,
    metrics,
    close: async () => {
      await rx.stop(); // what the reader took is still handed out, then the loop ends
      await loop;
      await rx.close();
    },
  };
}

/** The same ingest on node:dgram (one callback per datagram), for comparison. */
export async function startDgramIngest(options: { listen: string }): Promise<Ingest> {
  const [host, port] = options.listen.split(/:(?=\d+$)/);
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024 });
  const metrics = emptyMetrics();
  socket.on('message', (msg) => addDatagram(metrics, msg, 0, msg.length));
  await new Promise<void>((resolve) => socket.bind(Number(port), host, () => resolve()));
  return {
    port: socket.address().port,
    metrics,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
