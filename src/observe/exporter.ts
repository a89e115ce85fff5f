// The Prometheus exporter: host counters under node_exporter's names (src/observe/host-metrics.ts),
// per-socket metrics from the sock_diag view with bounded cardinality, and an HTTP server for
// /metrics. prom-client renders the text format.
import http from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { EnvironmentError } from '../errors.js';
import { formatHostPort } from '../policy/address.js';
import { resolveFirst } from '../policy/resolve.js';
import { TCP_STATES } from '../sys/constants.js';
import { assertLinux } from '../sys/sys-error.js';
import { analyze, type InspectedSocket, type Snapshot } from './analyze.js';
import { registerHostMetrics } from './host-metrics.js';
import { readHostLimits, takeSnapshot } from './inspect.js';
import { registerMetrics } from './metrics.js';
import { type SocketOwner, socketOwners } from './owners.js';
import { ALL_STATES } from './sockdiag.js';

export interface SocketMetricsOptions {
  /** At most this many sockets get per-socket series: flagged ones first, then the most limited. */
  top?: number;
}

const LABELS = ['protocol', 'role', 'address', 'port'] as const;
type SeriesLabels = Record<(typeof LABELS)[number], string>;

/**
 * A socket's series labels, steady as connections come and go (an ephemeral port would make a new
 * series per connection): a listener, its accepted connections and an unconnected UDP socket by
 * their local address and port (role 'listener'); a client socket by the address and port it
 * connects to (role 'client'). Pure.
 */
export function socketSeries(r: InspectedSocket, listeningPorts: ReadonlySet<number>): SeriesLabels {
  const listener =
    r.protocol === 'udp' ? r.remotePort === 0 : r.state === 'listen' || listeningPorts.has(r.localPort);
  return listener
    ? { protocol: r.protocol, role: 'listener', address: r.localAddress, port: String(r.localPort) }
    : { protocol: r.protocol, role: 'client', address: r.remoteAddress, port: String(r.remotePort) };
}

/** The TCP ports something listens on: an established socket on one of them was accepted. Pure. */
export function listeningPorts(rows: InspectedSocket[]): Set<number> {
  return new Set(rows.filter((r) => r.protocol === 'tcp' && r.state === 'listen').map((r) => r.localPort));
}

/**
 * How limited a row looks, for the top-N choice: the larger limited share; drops for UDP, and for a
 * TCP listener the connections it dropped in the interval (skmem d counts accept-queue overflows).
 */
function severity(r: InspectedSocket): number {
  if (r.protocol === 'udp') return r.dropsInInterval ?? r.drops ?? 0;
  if (r.state === 'listen') return r.dropsInInterval ?? 0;
  return Math.max(r.rwndLimitedPct ?? 0, r.sndbufLimitedPct ?? 0);
}

/** The rows that get series: flagged first, then by severity; never more than `top`. Pure. */
export function chooseSockets(rows: InspectedSocket[], top: number): InspectedSocket[] {
  return rows
    .filter((r) => r.limited || severity(r) > 0)
    .sort((a, b) => Number(b.limited) - Number(a.limited) || severity(b) - severity(a))
    .slice(0, top);
}

type Group = { labels: SeriesLabels; rows: InspectedSocket[] };

/** The chosen sockets grouped by their series labels (a listener's connections share one). Pure. */
function groupSeries(all: InspectedSocket[], top: number): Group[] {
  const ports = listeningPorts(all);
  const groups = new Map<string, Group>();
  for (const r of chooseSockets(all, top)) {
    const labels = socketSeries(r, ports);
    const key = JSON.stringify(labels);
    const g = groups.get(key) ?? { labels, rows: [] };
    g.rows.push(r);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/**
 * TCP states that hold buffers: all but time-wait, which has none (no tcp_info, no skmem) and of which
 * a busy host has tens of thousands (node_sockstat_TCP_tw counts them).
 */
const LIVE_STATES = ALL_STATES & ~(1 << TCP_STATES.indexOf('time-wait'));

/**
 * Per-socket metrics from a sock_diag sample taken at each scrape; ratios cover the time since the
 * previous scrape. Series: sockbuf_socket_{rwnd,sndbuf}_limited_ratio, sockbuf_socket_receive_buffer_bytes
 * (rb), sockbuf_socket_receive_queue_bytes (r), sockbuf_socket_send_buffer_bytes (tb),
 * sockbuf_socket_drops_total (d), sockbuf_socket_rtt_seconds, sockbuf_socket_busy_ratio,
 * sockbuf_socket_flagged{kind}, sockbuf_socket_owner_info{command, pid} — for at most `top` sockets, labelled {protocol, role, address, port} (socketSeries: sockets that share labels, such
 * as a listener's connections, share a series: the largest value, drops summed); and, unlabelled by
 * socket, sockbuf_sockets{protocol} and sockbuf_flagged_sockets{kind}.
 */
export function registerSocketMetrics(registry: Registry, opts: SocketMetricsOptions = {}): void {
  const top = opts.top ?? 20;
  const host = readHostLimits();
  let prev: Snapshot | undefined;
  let sample: { at: number; rows: InspectedSocket[]; series: Group[] } | undefined;
  // one sock_diag sample serves every collect() of a scrape (and scrapes within 250 ms of it)
  const current = () => {
    if (!sample || performance.now() - sample.at > 250) {
      const cur = takeSnapshot({ owners: false, states: LIVE_STATES });
      const all = analyze(cur, host, prev);
      sample = { at: performance.now(), rows: all, series: groupSeries(all, top) };
      prev = cur;
    }
    return sample;
  };
  const rows = () => current().rows;
  const series = () => current().series;
  /** A gauge per series: the largest value among its sockets (the worst one). */
  const perSocket = (name: string, help: string, f: (r: InspectedSocket) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: [...LABELS],
      registers: [registry],
      collect() {
        this.reset();
        for (const g of series()) {
          const vs = g.rows.map(f).filter((v): v is number => v !== undefined);
          if (vs.length) this.set(g.labels, Math.max(...vs));
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
      for (const g of series()) {
        const drops = g.rows.reduce((sum, r) => sum + (r.drops ?? 0), 0);
        if (g.rows.some((r) => r.drops !== undefined)) this.inc(g.labels, drops);
      }
    },
  });
  perSocket('sockbuf_socket_rtt_seconds', 'Smoothed round-trip time (tcp_info).', (r) =>
    r.rttUs === undefined ? undefined : r.rttUs / 1e6,
  );
  perSocket(
    'sockbuf_socket_busy_ratio',
    'Share of the time since the previous scrape the socket was busy sending (tcp_info busy time).',
    (r) => (r.busyMs === undefined || !r.intervalSeconds ? undefined : r.busyMs / 1000 / r.intervalSeconds),
  );
  // /proc/*/fd is read again only when a socket that gets series has no known owner yet and was not
  // looked for by the last scan, and at most once per sample: a steady set of limited sockets costs
  // no scan, and neither does one whose owner cannot be read (another user's, without the
  // capabilities) or is gone; each scan reads every fd of every process (0.3-1.3 s at 10 000 fds)
  let owners = new Map<number, SocketOwner>();
  let notFound = new Set<number>();
  let ownersOf: typeof sample;
  const unknown = (r: InspectedSocket) => r.inode > 0 && !owners.has(r.inode) && !notFound.has(r.inode);
  const join = (xs: (string | number)[]) =>
    [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');
  new Gauge({
    name: 'sockbuf_socket_owner_info',
    help: 'The processes that own the sockets of a series (comm and pid, comma-separated when several); 1. Absent where /proc/PID/fd cannot be read.',
    labelNames: [...LABELS, 'command', 'pid'],
    registers: [registry],
    collect() {
      this.reset();
      const gs = series();
      if (ownersOf !== sample && gs.some((g) => g.rows.some(unknown))) {
        owners = socketOwners();
        ownersOf = sample;
        notFound = new Set(
          gs.flatMap((g) => g.rows.filter((r) => r.inode > 0 && !owners.has(r.inode)).map((r) => r.inode)),
        );
      }
      for (const g of gs) {
        const known = g.rows.flatMap((r) => owners.get(r.inode) ?? []);
        if (known.length)
          this.set(
            { ...g.labels, command: join(known.map((o) => o.command)), pid: join(known.map((o) => o.pid)) },
            1,
          );
      }
    },
  });
  new Gauge({
    name: 'sockbuf_socket_flagged',
    help: 'Set to 1 for a socket inspect flags as buffer-limited; kind says which limit.',
    labelNames: [...LABELS, 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const g of series())
        for (const r of g.rows) for (const f of r.flags) this.set({ ...g.labels, kind: f.kind }, 1);
    },
  });
  new Gauge({
    name: 'sockbuf_sockets',
    help: 'TCP and UDP sockets on the host (this network namespace), not counting TCP time-wait.',
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

/** What startExporter takes: where it listens, which sockets it reports and how it is protected. */
export interface ExporterOptions extends SocketMetricsOptions {
  host?: string;
  port?: number;
  /**
   * node_exporter's host series (node_netstat_*, node_softnet_*, node_sockstat_*); default true. Off
   * where node_exporter already runs: the same series from two jobs double-count in sum(rate(...)).
   */
  hostCounters?: boolean;
  /** Also export sockbuf's own sockets of this process (registerMetrics). */
  own?: boolean;
  /**
   * What answers /probe: probeHandler(…) (serve/probe-http.ts: tests against iperf3 and sockbuf serve on
   * Prometheus's schedule). Without it /probe is off (404).
   */
  probe?: (req: http.IncomingMessage, res: http.ServerResponse) => void;
}

/** A running exporter (`sockbuf exporter`): its address, and close(). */
export interface Exporter {
  /** http://host:port/metrics */
  url: string;
  registry: Registry;
  close(): Promise<void>;
}

/** Serves /metrics on host:port (127.0.0.1:9477 by default). Port in use: EnvironmentError; off Linux: LinuxOnlyError (both exit 3). */
export async function startExporter(opts: ExporterOptions = {}): Promise<Exporter> {
  // every series comes from /proc and sock_diag: elsewhere it would serve only errors (exit 3)
  assertLinux('sockbuf exporter');
  const registry = new Registry();
  if (opts.hostCounters !== false) registerHostMetrics(registry);
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
    } else if (path === '/probe') {
      if (opts.probe) opts.probe(req, res);
      else
        res
          .writeHead(404, { 'content-type': 'text/plain' })
          .end('/probe is off: start the exporter with --probe-allow LIST (the targets it may test)\n');
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
