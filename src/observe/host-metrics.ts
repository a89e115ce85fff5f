// Host counters under node_exporter's exact names, so existing dashboards and alerts work and a host
// that already runs node_exporter can leave them out (startExporter's hostCounters: false): two jobs
// exporting the same series double-count in an unfiltered sum(rate(...)).
//   netstat  node_netstat_<Proto>_<Field> (CamelCase, no _total), the fields node_exporter exports by
//            default plus the buffer-related ones it leaves out
//   softnet  node_softnet_{processed,dropped,times_squeezed}_total{cpu}
//   sockstat node_sockstat_sockets_used, node_sockstat_<TCP|UDP|TCP6|UDP6>_<field> (+ _mem_bytes)
import { Counter, Gauge, type Registry } from 'prom-client';
import { pageSize } from '../sys/libc.js';
import { readSnmp, readSockstat, readSoftnet } from './proc.js';
import { Collectors } from './self-metrics.js';

/** node_exporter's default --collector.netstat.fields, matched against `<Proto>_<Field>`. */
export const NODE_EXPORTER_NETSTAT_FIELDS =
  /^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts|TCPOFOQueue|TCPRcvQDrop)|Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$/;

/** What sockbuf adds: the buffer-related fields node_exporter leaves out by default. */
export const BUFFER_NETSTAT_FIELDS =
  /^(Udp6?_(InCsumErrors|MemErrors)|TcpExt_(TCPRcvCollapsed|PruneCalled|RcvPruned|OfoPruned|TCPMemoryPressures|TCPBacklogDrop|TCPZeroWindowDrop|TCPToZeroWindowAdv|TCPFromZeroWindowAdv|TCPWantZeroWindowAdv))$/;

/** The `<Proto>_<Field>` names exported from a parsed snmp/netstat/snmp6 view. Pure. */
export function netstatFields(present: Record<string, Record<string, number>>): string[] {
  const out: string[] = [];
  for (const [proto, fields] of Object.entries(present))
    for (const field of Object.keys(fields)) {
      const name = `${proto}_${field}`;
      if (NODE_EXPORTER_NETSTAT_FIELDS.test(name) || BUFFER_NETSTAT_FIELDS.test(name)) out.push(name);
    }
  return out;
}

/** sockstat lines exported (node_exporter exports every line; sockbuf the TCP and UDP ones). */
const SOCKSTAT_PROTOCOLS = ['TCP', 'UDP', 'TCP6', 'UDP6'];

/**
 * One read of /proc per scrape, however many series ask (reads within 250 ms share one), run as the
 * collector `name`: a read that fails gives `fallback` (no series) and the collector's success 0.
 */
function cached<T>(collectors: Collectors, name: string, read: () => T, fallback: T): () => T {
  let c: { at: number; v: T } | undefined;
  return () => {
    if (!c || performance.now() - c.at > 250)
      c = { at: performance.now(), v: collectors.run(name, read, fallback) };
    return c.v;
  };
}

/**
 * Adds the node_netstat_*, node_softnet_* and node_sockstat_* series present on this kernel; each of
 * the three files is a collector (netstat, softnet, sockstat) of `collectors`.
 */
export function registerHostMetrics(
  registry: Registry,
  procRoot?: string,
  collectors = new Collectors(),
): void {
  const snmp = cached(collectors, 'netstat', () => readSnmp(procRoot), {});
  for (const name of netstatFields(snmp())) {
    const [proto, field] = [name.slice(0, name.indexOf('_')), name.slice(name.indexOf('_') + 1)];
    new Gauge({
      name: `node_netstat_${name}`,
      help: `Statistic ${proto}${field}.`,
      registers: [registry],
      collect() {
        const v = snmp()[proto]?.[field];
        if (v !== undefined) this.set(v);
      },
    });
  }

  const softnet = cached(collectors, 'softnet', () => readSoftnet(procRoot), []);
  if (softnet().length) {
    const perCpu = (name: string, help: string, f: (r: ReturnType<typeof softnet>[number]) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['cpu'],
        registers: [registry],
        collect() {
          this.reset();
          for (const r of softnet()) this.inc({ cpu: String(r.cpu) }, f(r));
        },
      });
    perCpu('node_softnet_processed_total', 'Number of processed packets', (r) => r.processed);
    perCpu('node_softnet_dropped_total', 'Number of dropped packets', (r) => r.dropped);
    perCpu(
      'node_softnet_times_squeezed_total',
      'Number of times processing packets ran out of quota',
      (r) => r.timeSqueezed,
    );
  }

  const sockstat = cached(collectors, 'sockstat', () => readSockstat(procRoot), {});
  const gauge = (name: string, help: string, read: () => number | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = read();
        if (v !== undefined) this.set(v);
      },
    });
  const now = sockstat();
  if (now.sockets?.used !== undefined)
    gauge('node_sockstat_sockets_used', 'Number of IPv4 sockets in use.', () => sockstat().sockets?.used);
  const page = pageSize();
  for (const proto of SOCKSTAT_PROTOCOLS) {
    for (const field of Object.keys(now[proto] ?? {})) {
      gauge(
        `node_sockstat_${proto}_${field}`,
        `Number of ${proto} sockets in state ${field}.`,
        () => sockstat()[proto]?.[field],
      );
      if (field === 'mem')
        gauge(`node_sockstat_${proto}_mem_bytes`, `Number of ${proto} sockets in state mem_bytes.`, () => {
          const v = sockstat()[proto]?.mem;
          return v === undefined ? undefined : v * page;
        });
    }
  }
}
