// The exporter's per-socket metrics from the sock_diag view, with bounded cardinality; the HTTP server
// that serves them with the host counters is exporter-server.ts. prom-client renders the text format.
import { Counter, Gauge, type Registry } from 'prom-client';
import { checkWhole, OPTIONS } from '../policy/option-registry.js';
import { TCP_STATES } from '../sys/constants.js';
import { analyze, FLAG_KINDS, type HostLimits, type InspectedSocket, type Snapshot } from './analyze.js';
import { ChronoWindow } from './chrono-window.js';
import { FlagMemory } from './flag-memory.js';
import { readHostLimits, takeSnapshot } from './inspect.js';
import { type SocketOwner, socketOwners } from './owners.js';
import { pinInfo } from './pin-advice.js';
import { Collectors } from './self-metrics.js';
import { ALL_STATES } from './sockdiag.js';

export interface SocketMetricsOptions {
  /** At most this many sockets get per-socket series: flagged ones first, then the most limited. */
  top?: number;
  /** Where the sock_diag sample ('sockets') and the owner scan ('owners') report their runs. */
  collectors?: Collectors;
}

const LABELS = ['protocol', 'role', 'address', 'port', 'pid', 'command'] as const;
type SeriesLabels = Record<Exclude<(typeof LABELS)[number], 'pid' | 'command'>, string> & {
  pid?: string;
  command?: string;
};

/**
 * A socket's series labels, steady as connections come and go (an ephemeral port would make a new
 * series per connection): a listener, its accepted connections and an unconnected UDP socket by
 * their local address and port (role 'listener'); a connection accepted by a listener that is gone
 * (osiris's replica socket on the follower) by its local address and port and, when known, the
 * command of its process (role 'accepted': a new port after a restart is a new series, the peer's
 * ephemeral port never is); a client socket by the address and port it connects to and, when known,
 * the pid of its process (role 'client': two programs connecting to one broker keep two series). Pure.
 */
export function socketSeries(
  r: InspectedSocket,
  listeningPorts: ReadonlySet<number>,
  owner?: { pid?: number; command?: string },
): SeriesLabels {
  const listener =
    r.protocol === 'udp' ? r.remotePort === 0 : r.state === 'listen' || listeningPorts.has(r.localPort);
  if (listener)
    return { protocol: r.protocol, role: 'listener', address: r.localAddress, port: String(r.localPort) };
  if (r.role === 'accepted') {
    const labels: SeriesLabels = {
      protocol: r.protocol,
      role: 'accepted',
      address: r.localAddress,
      port: String(r.localPort),
    };
    if (owner?.command) labels.command = owner.command;
    return labels;
  }
  const labels: SeriesLabels = {
    protocol: r.protocol,
    role: 'client',
    address: r.remoteAddress,
    port: String(r.remotePort),
  };
  if (owner?.pid !== undefined) labels.pid = String(owner.pid);
  return labels;
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

export type Group = { labels: SeriesLabels; rows: InspectedSocket[] };

/**
 * The series of the chosen sockets, each with every socket that shares its labels (a listener's
 * connections: the series carries the largest of them, so a busy connection that was not chosen
 * still shows in its listener's busy ratio). `ownerOf` gives client series their pid and accepted
 * ones their command. Pure.
 */
export function groupSeries(
  all: InspectedSocket[],
  top: number,
  ownerOf: (r: InspectedSocket) => { pid?: number; command?: string } | undefined = (r) => r,
): Group[] {
  const ports = listeningPorts(all);
  const key = (l: SeriesLabels) =>
    `${l.protocol}|${l.role}|${l.address}|${l.port}|${l.pid ?? ''}|${l.command ?? ''}`;
  const groups = new Map<string, Group>();
  for (const r of chooseSockets(all, top)) {
    const labels = socketSeries(r, ports, ownerOf(r));
    if (!groups.has(key(labels))) groups.set(key(labels), { labels, rows: [] });
  }
  for (const r of all) groups.get(key(socketSeries(r, ports, ownerOf(r))))?.rows.push(r);
  return [...groups.values()];
}

/**
 * TCP states that hold buffers: all but time-wait, which has none (no tcp_info, no skmem) and of which
 * a busy host has tens of thousands (node_sockstat_TCP_tw counts them).
 */
const LIVE_STATES = ALL_STATES & ~(1 << TCP_STATES.indexOf('time-wait'));

/**
 * Per-socket metrics from a sock_diag sample taken at each scrape; ratios cover 1-2 minutes
 * (ChronoWindow), flags hold through quiet scrapes (FlagMemory). Series: sockbuf_socket_{rwnd,sndbuf}_limited_ratio, sockbuf_socket_receive_buffer_bytes
 * (rb), sockbuf_socket_receive_queue_bytes (r), sockbuf_socket_send_buffer_bytes (tb),
 * sockbuf_socket_drops_total (d), sockbuf_socket_rtt_seconds, sockbuf_socket_busy_ratio,
 * sockbuf_socket_flagged{kind}, sockbuf_socket_owner_info{command, pid}, sockbuf_socket_listen_drops_total
 * (a listener's own d: accept-queue overflows), sockbuf_socket_peer_info{peer} — for at most `top`
 * sockets, labelled {protocol, role, address, port, and pid for a client} (socketSeries: sockets
 * that share labels, such as a listener's connections, share a series: the largest value, drops
 * summed); and, unlabelled by socket, sockbuf_sockets{protocol}, sockbuf_flagged_sockets{kind} and
 * sockbuf_autotuning_max_bytes{buffer}.
 */
export function registerSocketMetrics(registry: Registry, opts: SocketMetricsOptions = {}): void {
  const top = checkWhole('top', opts.top ?? OPTIONS.top.default);
  const collectors = opts.collectors ?? new Collectors();
  const host = readHostLimits();
  let prev: Snapshot | undefined;
  let sample: { at: number; rows: InspectedSocket[]; series: Group[] } | undefined;
  const memory = new FlagMemory();
  const ratios = new ChronoWindow();
  // /proc/*/fd is read again only when a socket that gets series has no known owner yet and was not
  // looked for by the last scan: a steady set of limited sockets costs no scan, and neither does one
  // whose owner cannot be read (another user's, without the capabilities) or is gone; each scan reads
  // every fd of every process (0.3-1.3 s at 10 000 fds)
  let owners = new Map<number, SocketOwner>();
  let notFound = new Set<number>();
  const unknown = (r: InspectedSocket) => r.inode > 0 && !owners.has(r.inode) && !notFound.has(r.inode);
  // one sock_diag sample serves every collect() of a scrape (and scrapes within 250 ms of it)
  const current = () => {
    if (!sample || performance.now() - sample.at > 250) {
      const all = collectors.run('sockets', () => {
        const cur = takeSnapshot({ owners: false, states: LIVE_STATES });
        const rows = analyze(cur, host, prev);
        prev = cur;
        ratios.apply(rows, cur.sockets, cur.atMs); // ratios over 1-2 minutes; flags over the interval
        return rows;
      }, []);
      memory.apply(all);
      const chosen = chooseSockets(all, top);
      if (chosen.some(unknown)) {
        owners = collectors.run('owners', () => socketOwners(), owners);
        notFound = new Set(chosen.filter((r) => r.inode > 0 && !owners.has(r.inode)).map((r) => r.inode));
      }
      sample = {
        at: performance.now(),
        rows: all,
        series: groupSeries(all, top, (r) => owners.get(r.inode)),
      };
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
          if (vs.length)
            this.set(
              g.labels,
              vs.reduce((a, v) => Math.max(a, v)),
            ); // no spread: any count
        }
      },
    });
  const ratio = (p?: number) => (p === undefined ? undefined : p / 100);
  perSocket(
    'sockbuf_socket_rwnd_limited_ratio',
    "Share of busy sending time limited by the peer's receive window over the last 1-2 minutes (the time since the previous scrape, when that is longer).",
    (r) => ratio(r.rwndLimitedPct),
  );
  perSocket(
    'sockbuf_socket_sndbuf_limited_ratio',
    'Share of busy sending time limited by the send buffer over the last 1-2 minutes (the time since the previous scrape, when that is longer).',
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
  new Counter({
    name: 'sockbuf_socket_listen_drops_total',
    help: "Connections a listener dropped since it opened (its own skmem d: accept-queue overflows), apart from its established connections' packet drops.",
    labelNames: [...LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const g of series()) {
        const own = g.rows.filter((r) => r.protocol === 'tcp' && r.state === 'listen');
        if (own.length)
          this.inc(
            g.labels,
            own.reduce((sum, r) => sum + (r.drops ?? 0), 0),
          );
      }
    },
  });
  perSocket('sockbuf_socket_rtt_seconds', 'Smoothed round-trip time (tcp_info).', (r) =>
    r.rttUs === undefined ? undefined : r.rttUs / 1e6,
  );
  perSocket(
    'sockbuf_socket_busy_ratio',
    'Share of the time the socket was busy sending (tcp_info busy time) over the last 1-2 minutes (the time since the previous scrape, when that is longer).',
    (r) => r.busyRatio,
  );
  const join = (xs: (string | number)[]) =>
    [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');
  new Gauge({
    name: 'sockbuf_socket_owner_info',
    help: 'The processes that own the sockets of a series (comm and pid, comma-separated when several); 1. Absent where /proc/PID/fd cannot be read.',
    labelNames: [...LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const g of series()) {
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
    name: 'sockbuf_socket_peer_info',
    help: "A listener series' peers: the remote addresses of its flagged connections (of all of them when none is flagged), at most 3; 1.",
    labelNames: [...LABELS, 'peer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const g of series()) {
        if (g.labels.role !== 'listener' || g.labels.protocol !== 'tcp') continue;
        const open = g.rows.filter((r) => r.remotePort !== 0);
        const flagged = open.filter((r) => r.limited);
        const peers = [...new Set((flagged.length ? flagged : open).map((r) => r.remoteAddress))].sort();
        if (peers.length)
          this.set(
            { ...g.labels, peer: peers.length > 3 ? `${peers.slice(0, 3).join(', ')} …` : peers.join(', ') },
            1,
          );
      }
    },
  });
  new Gauge({
    name: 'sockbuf_autotuning_max_bytes',
    help: 'What autotuning may grow a TCP buffer to on this host: tcp_rmem[2] (buffer="receive"), tcp_wmem[2] (buffer="send").',
    labelNames: ['buffer'],
    registers: [registry],
    collect() {
      this.set({ buffer: 'receive' }, host.tcpRmemMax);
      this.set({ buffer: 'send' }, host.tcpWmemMax);
    },
  });
  registerPinMetrics(registry, host, current, (r) => owners.get(r.inode)?.command);
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
      for (const kind of FLAG_KINDS) {
        this.set({ kind }, rows().filter((r) => r.flags.some((f) => f.kind === kind)).length);
      }
    },
  });
}

/**
 * sockbuf_setsockopt_max_bytes{buffer} (rmem_max, wmem_max; absent where unreadable) and
 * sockbuf_socket_pin_info{buffer, setter, ceiling}: what the pinned-buffer alerts say of the kernel's
 * ceiling and of who set the buffer, per socket (pin-advice.ts pinInfo).
 */
function registerPinMetrics(
  registry: Registry,
  host: HostLimits,
  current: () => { rows: InspectedSocket[]; series: Group[] },
  commandOf: (r: InspectedSocket) => string | undefined,
): void {
  new Gauge({
    name: 'sockbuf_setsockopt_max_bytes',
    help: 'The most SO_RCVBUF (net.core.rmem_max, buffer="receive") and SO_SNDBUF (net.core.wmem_max, buffer="send") get on this host: a pinned buffer sits at the kernel\'s ceiling at twice this. Absent where the sysctl cannot be read.',
    labelNames: ['buffer'],
    registers: [registry],
    collect() {
      this.reset();
      if (host.rmemMax !== undefined) this.set({ buffer: 'receive' }, host.rmemMax);
      if (host.wmemMax !== undefined) this.set({ buffer: 'send' }, host.wmemMax);
    },
  });
  new Gauge({
    name: 'sockbuf_socket_pin_info',
    help: 'A series whose flagged sockets have a pinned buffer (buffer="receive" or "send"): setter, who set it (programs.ts; empty when unknown); ceiling, whether it sits at 2 × net.core.rmem_max/wmem_max (yes, no, unknown where the sysctl cannot be read); 1.',
    labelNames: [...LABELS, 'buffer', 'setter', 'ceiling'],
    registers: [registry],
    collect() {
      this.reset();
      const { rows, series } = current();
      const ports = listeningPorts(rows);
      for (const g of series)
        for (const r of g.rows)
          for (const p of pinInfo(r, commandOf(r), host, ports)) this.set({ ...g.labels, ...p }, 1);
    },
  });
}
