// The Prometheus exporter: host counters under node_exporter's names (so existing dashboards and
// alerts work), per-socket metrics from the sock_diag view with bounded cardinality, and an HTTP
// server for /metrics. prom-client renders the text format.
import http from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { formatHostPort } from '../policy/address.js';
import { resolveFirst } from '../policy/resolve.js';
import { EnvironmentError } from '../policy/units.js';
import { analyze, type InspectedSocket, type Snapshot } from './analyze.js';
import { readHostLimits, takeSnapshot } from './inspect.js';
import { registerMetrics } from './metrics.js';
import { readSnmp } from './proc.js';

const UDP_COUNTERS = [
  'InDatagrams',
  'NoPorts',
  'InErrors',
  'OutDatagrams',
  'RcvbufErrors',
  'SndbufErrors',
  'InCsumErrors',
  'MemErrors',
];

/**
 * The host counters exported, as node_exporter's netstat collector names them:
 * node_netstat_<Proto>_<Field>, original CamelCase, no _total (an exception to the conventions kept
 * so dashboards interoperate). node_exporter's defaults plus the buffer-related TcpExt fields.
 */
export const HOST_COUNTERS: Record<string, string[]> = {
  Udp: UDP_COUNTERS,
  Udp6: UDP_COUNTERS,
  Tcp: ['ActiveOpens', 'PassiveOpens', 'CurrEstab', 'InSegs', 'OutSegs', 'RetransSegs', 'InErrs', 'OutRsts'],
  TcpExt: [
    'TCPRcvQDrop',
    'TCPOFOQueue',
    'TCPRcvCollapsed',
    'PruneCalled',
    'RcvPruned',
    'OfoPruned',
    'TCPMemoryPressures',
    'TCPBacklogDrop',
    'TCPZeroWindowDrop',
    'TCPToZeroWindowAdv',
    'TCPFromZeroWindowAdv',
    'TCPWantZeroWindowAdv',
    'ListenOverflows',
    'ListenDrops',
  ],
};

/** Adds the node_netstat_* host counters present on this kernel; /proc is read once per scrape. */
export function registerHostMetrics(registry: Registry, procRoot?: string): void {
  let cache: { at: number; v: Record<string, Record<string, number>> } | undefined;
  const snmp = () => {
    if (!cache || performance.now() - cache.at > 250)
      cache = { at: performance.now(), v: readSnmp(procRoot) };
    return cache.v;
  };
  const present = snmp();
  for (const [proto, fields] of Object.entries(HOST_COUNTERS)) {
    for (const field of fields) {
      if (present[proto]?.[field] === undefined) continue;
      new Gauge({
        name: `node_netstat_${proto}_${field}`,
        help: `Statistic ${proto}${field}.`,
        registers: [registry],
        collect() {
          const v = snmp()[proto]?.[field];
          if (v !== undefined) this.set(v);
        },
      });
    }
  }
}

export interface SocketMetricsOptions {
  /** At most this many sockets get per-socket series: flagged ones first, then the most limited. */
  top?: number;
}

const LABELS = ['protocol', 'local_address', 'local_port', 'remote_address', 'remote_port'] as const;

/** How limited a row looks, for the top-N choice: the larger limited share, or drops for UDP. */
function severity(r: InspectedSocket): number {
  if (r.protocol === 'udp') return r.dropsInInterval ?? r.drops ?? 0;
  return Math.max(r.rwndLimitedPct ?? 0, r.sndbufLimitedPct ?? 0);
}

/** The rows that get series: flagged first, then by severity; never more than `top`. Pure. */
export function chooseSockets(rows: InspectedSocket[], top: number): InspectedSocket[] {
  return rows
    .filter((r) => r.limited || severity(r) > 0)
    .sort((a, b) => Number(b.limited) - Number(a.limited) || severity(b) - severity(a))
    .slice(0, top);
}

/**
 * Per-socket metrics from a sock_diag sample taken at each scrape; ratios cover the time since the
 * previous scrape. Series: sockbuf_socket_{rwnd,sndbuf}_limited_ratio, sockbuf_socket_receive_buffer_bytes
 * (rb), sockbuf_socket_receive_queue_bytes (r), sockbuf_socket_send_buffer_bytes (tb),
 * sockbuf_socket_drops_total (d), sockbuf_socket_rtt_seconds, sockbuf_socket_flagged{kind} — for at most
 * `top` sockets; and, unlabelled by socket, sockbuf_sockets{protocol} and sockbuf_flagged_sockets{kind}.
 */
export function registerSocketMetrics(registry: Registry, opts: SocketMetricsOptions = {}): void {
  const top = opts.top ?? 20;
  const host = readHostLimits();
  let prev: Snapshot | undefined;
  let sample: { at: number; rows: InspectedSocket[] } | undefined;
  const rows = () => {
    if (!sample || performance.now() - sample.at > 250) {
      const cur = takeSnapshot({ owners: false });
      sample = { at: performance.now(), rows: analyze(cur, host, prev) };
      prev = cur;
    }
    return sample.rows;
  };
  const labels = (r: InspectedSocket) => ({
    protocol: r.protocol,
    local_address: r.localAddress,
    local_port: String(r.localPort),
    remote_address: r.remoteAddress,
    remote_port: String(r.remotePort),
  });
  const perSocket = (name: string, help: string, f: (r: InspectedSocket) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: [...LABELS],
      registers: [registry],
      collect() {
        this.reset();
        for (const r of chooseSockets(rows(), top)) {
          const v = f(r);
          if (v !== undefined) this.set(labels(r), v);
        }
      },
    });
  const ratio = (p?: number) => (p === undefined ? undefined : p / 100);
  perSocket(
    'sockbuf_socket_rwnd_limited_ratio',
    "Share of busy sending time limited by the peer's receive window since the previous scrape.",
    (r) => ratio(r.rwndLimitedPct),
  );
  perSocket(
    'sockbuf_socket_sndbuf_limited_ratio',
    'Share of busy sending time limited by the send buffer since the previous scrape.',
    (r) => ratio(r.sndbufLimitedPct),
  );
  perSocket('sockbuf_socket_receive_buffer_bytes', 'Receive buffer limit (skmem rb).', (r) => r.rcvbufBytes);
  perSocket('sockbuf_socket_receive_queue_bytes', 'Bytes queued for reading (skmem r).', (r) => r.rmemBytes);
  perSocket('sockbuf_socket_send_buffer_bytes', 'Send buffer limit (skmem tb).', (r) => r.sndbufBytes);
  new Counter({
    name: 'sockbuf_socket_drops_total',
    help: 'Packets dropped before reaching the socket since it opened (skmem d).',
    labelNames: [...LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of chooseSockets(rows(), top)) if (r.drops !== undefined) this.inc(labels(r), r.drops);
    },
  });
  perSocket('sockbuf_socket_rtt_seconds', 'Smoothed round-trip time (tcp_info).', (r) =>
    r.rttUs === undefined ? undefined : r.rttUs / 1e6,
  );
  new Gauge({
    name: 'sockbuf_socket_flagged',
    help: 'Set to 1 for a socket inspect flags as buffer-limited; kind says which limit.',
    labelNames: [...LABELS, 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of chooseSockets(rows(), top))
        for (const f of r.flags) this.set({ ...labels(r), kind: f.kind }, 1);
    },
  });
  new Gauge({
    name: 'sockbuf_sockets',
    help: 'TCP and UDP sockets on the host (this network namespace).',
    labelNames: ['protocol'],
    registers: [registry],
    collect() {
      this.reset();
      const all = rows();
      for (const protocol of ['tcp', 'udp'])
        this.set({ protocol }, all.filter((r) => r.protocol === protocol).length);
    },
  });
  new Gauge({
    name: 'sockbuf_flagged_sockets',
    help: 'Sockets flagged as buffer-limited, by kind (all of them, not only the top N).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const kind of ['rwnd-limited', 'pinned-rcvbuf', 'sndbuf-limited', 'udp-drops']) {
        this.set({ kind }, rows().filter((r) => r.flags.some((f) => f.kind === kind)).length);
      }
    },
  });
}

export interface ExporterOptions extends SocketMetricsOptions {
  host?: string;
  port?: number;
  /** Also export sockbuf's own sockets of this process (registerMetrics). */
  own?: boolean;
}

export interface Exporter {
  /** http://host:port/metrics */
  url: string;
  registry: Registry;
  close(): Promise<void>;
}

/** Serves /metrics on host:port (127.0.0.1:9477 by default). Port in use: EnvironmentError (exit 3). */
export async function startExporter(opts: ExporterOptions = {}): Promise<Exporter> {
  const registry = new Registry();
  registerHostMetrics(registry);
  registerSocketMetrics(registry, opts);
  if (opts.own) registerMetrics(registry);
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      try {
        const body = await registry.metrics();
        res
          .writeHead(200, { 'content-type': registry.contentType })
          .end(req.method === 'HEAD' ? undefined : body);
      } catch (err) {
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`${err instanceof Error ? err.message : err}\n`);
      }
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/metrics">sockbuf metrics</a>\n');
    } else {
      res.writeHead(404).end();
    }
  });
  const host = await resolveFirst(opts.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = formatHostPort({ host, port: opts.port ?? 9477 });
      const cause = { cause: err };
      if (err.code === 'EADDRINUSE')
        reject(new EnvironmentError(`exporter: ${where} is already in use`, cause));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new EnvironmentError(`exporter: ${where}: no such local address`, cause));
      else if (err.code === 'EACCES')
        reject(new EnvironmentError(`exporter: ${where}: permission denied`, cause));
      else reject(err);
    });
    server.listen(opts.port ?? 9477, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 9477);
  return {
    url: `http://${formatHostPort({ host, port })}/metrics`,
    registry,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
