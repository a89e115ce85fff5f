// registerMetrics(registry): sockbuf's own sockets (src/observe/tracked.ts) as Prometheus metrics in
// the application's prom-client registry. Values are read at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';
import { UsageError } from '../errors.js';
import { shown } from '../policy/shown.js';
import { getTcpInfo } from '../sys/tcpinfo.js';
import {
  type TcpChrono,
  type TrackedTcp,
  type TrackedUdp,
  trackedSources,
  type UdpSourceStats,
} from './tracked.js';

function groups<T extends { name: string }>(items: T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const i of items) m.set(i.name, [...(m.get(i.name) ?? []), i]);
  return m;
}

function sum<T>(items: T[], f: (t: T) => number | undefined): number {
  return items.reduce((a, t) => a + (f(t) ?? 0), 0);
}

/** A source's stats, or undefined when it throws (closed under our feet): one bad source never fails a scrape. */
function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function chrono(s: { tcpInfo?: TcpChrono; fd?: number }): TcpChrono | undefined {
  if (s.tcpInfo) return s.tcpInfo;
  if (s.fd === undefined) return undefined;
  try {
    return getTcpInfo(s.fd);
  } catch {
    return undefined; // closed between the snapshot and now
  }
}

/**
 * The application's prom-client Registry, of whichever version it installed (14 and 15 both fit): all
 * registerMetrics uses of it is registerMetric(), so the type is structural, not prom-client 15's class.
 */
export interface MetricsRegistry {
  /** Adds a metric to the registry (prom-client's Registry.registerMetric). */
  registerMetric(metric: never): void;
}

/**
 * Adds sockbuf's metrics to `registry`: per UDP receiver (label `receiver`)
 * sockbuf_udp_received_total, sockbuf_udp_kernel_drops_total, sockbuf_udp_userspace_drops_total,
 * sockbuf_udp_truncated_total, sockbuf_udp_batches_total, sockbuf_udp_packets_per_batch (mean since
 * the previous scrape), sockbuf_udp_receive_buffer_bytes; per TCP name (label `name`)
 * sockbuf_tcp_connections, sockbuf_read_buffer_bytes, sockbuf_tcp_rwnd_limited_ratio and
 * sockbuf_tcp_sndbuf_limited_ratio (limited time over busy time, summed over the open connections).
 * Call once per registry.
 */
export function registerMetrics(registry: MetricsRegistry): void {
  if (typeof (registry as { registerMetric?: unknown } | null)?.registerMetric !== 'function')
    throw UsageError.invalid(
      'registry',
      shown(registry),
      'a prom-client Registry (an object with registerMetric())',
    );
  // prom-client's metrics call registers[i].registerMetric(this); the registry of another version
  // then reads them with metric.get() at scrape time, which 14 and 15 call alike.
  const registers = [registry as unknown as Registry];
  const udp = () => groups(trackedSources().filter((s): s is TrackedUdp => s.kind === 'udp'));
  const tcp = () => groups(trackedSources().filter((s): s is TrackedTcp => s.kind === 'tcp'));
  const udpStats = () =>
    [...udp()].map(
      ([name, list]) =>
        [name, list.map((s) => safe(() => s.stats())).filter((x): x is UdpSourceStats => !!x)] as const,
    );

  const udpCounter = (name: string, help: string, f: (s: UdpSourceStats) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['receiver'],
      registers,
      collect() {
        this.reset();
        for (const [receiver, stats] of udpStats()) this.inc({ receiver }, sum(stats, f));
      },
    });
  udpCounter('sockbuf_udp_received_total', 'Datagrams handed to the application.', (s) => s.received);
  udpCounter(
    'sockbuf_udp_kernel_drops_total',
    'Datagrams the kernel dropped before the socket (receive buffer full).',
    (s) => s.kernelDrops,
  );
  udpCounter(
    'sockbuf_udp_userspace_drops_total',
    'Datagrams read from the kernel and dropped because the consumer was behind.',
    (s) => s.userspaceDrops,
  );
  udpCounter(
    'sockbuf_udp_truncated_total',
    'Datagrams larger than a slot: counted, never delivered.',
    (s) => s.truncated,
  );
  udpCounter('sockbuf_udp_batches_total', 'Batches handed to JavaScript.', (s) => s.batches);

  const last = new Map<string, { received: number; batches: number }>();
  new Gauge({
    name: 'sockbuf_udp_packets_per_batch',
    help: 'Mean datagrams per batch since the previous scrape (since the receiver opened, on the first).',
    labelNames: ['receiver'],
    registers,
    collect() {
      this.reset();
      for (const [receiver, stats] of udpStats()) {
        const now = { received: sum(stats, (s) => s.received), batches: sum(stats, (s) => s.batches) };
        const before = last.get(receiver) ?? { received: 0, batches: 0 };
        const batches = now.batches - before.batches;
        const received = now.received - before.received;
        last.set(receiver, now);
        if (batches > 0) this.set({ receiver }, received / batches);
      }
    },
  });
  new Gauge({
    name: 'sockbuf_udp_receive_buffer_bytes',
    help: 'SO_RCVBUF of the receiver (as getsockopt reports it, summed over its sockets).',
    labelNames: ['receiver'],
    registers,
    collect() {
      this.reset();
      for (const [receiver, stats] of udpStats())
        this.set(
          { receiver },
          sum(stats, (s) => s.rcvbuf),
        );
    },
  });

  const tcpGauge = (
    name: string,
    help: string,
    f: (stats: { readBufferBytes: number; chrono?: TcpChrono }[]) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['name'],
      registers,
      collect() {
        this.reset();
        for (const [n, list] of tcp()) {
          const stats = list.flatMap((s) => {
            const st = safe(() => s.stats());
            return st ? [{ readBufferBytes: st.readBufferBytes, chrono: chrono(st) }] : [];
          });
          const v = f(stats);
          if (v !== undefined) this.set({ name: n }, v);
        }
      },
    });
  const ratio = (k: 'rwndLimited' | 'sndbufLimited') => (st: { chrono?: TcpChrono }[]) => {
    const busy = sum(st, (s) => s.chrono?.busyTime);
    return busy > 0 ? sum(st, (s) => s.chrono?.[k]) / busy : undefined;
  };
  tcpGauge('sockbuf_tcp_connections', 'Open TCP connections made through sockbuf.', (st) => st.length);
  tcpGauge('sockbuf_read_buffer_bytes', 'Read-buffer bytes in use by these connections.', (st) =>
    sum(st, (s) => s.readBufferBytes),
  );
  tcpGauge(
    'sockbuf_tcp_rwnd_limited_ratio',
    "Share of busy sending time limited by the peer's receive window (tcp_info), over the open connections.",
    ratio('rwndLimited'),
  );
  tcpGauge(
    'sockbuf_tcp_sndbuf_limited_ratio',
    'Share of busy sending time limited by the send buffer (tcp_info), over the open connections.',
    ratio('sndbufLimited'),
  );
}
