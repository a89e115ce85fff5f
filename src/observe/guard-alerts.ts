// The alerts that watch the watcher, in the node-mixin/kube-prometheus way: an exporter that stopped
// answering, a collector that fails, and a host series the other rules need that no job exports (an
// alert over a missing series can never fire, and says nothing). Pure; alerts.ts adds them to the rules
// file with every other group.
import type { RuleGroup } from './alert-rule.js';

/** node_exporter 1.5's default --collector.netstat.fields with TcpExt_TCPMemoryPressures added. */
export const NETSTAT_FIELDS_WITH_PRESSURE =
  '^(.*_(InErrors|InErrs)|Ip_Forwarding|Ip(6|Ext)_(InOctets|OutOctets)|Icmp6?_(InMsgs|OutMsgs)|' +
  'TcpExt_(Listen.*|Syncookies.*|TCPSynRetrans|TCPTimeouts|TCPMemoryPressures)|' +
  'Tcp_(ActiveOpens|InSegs|OutSegs|OutRsts|PassiveOpens|RetransSegs|CurrEstab)|' +
  'Udp6?_(InDatagrams|OutDatagrams|NoPorts|RcvbufErrors|SndbufErrors))$';

/** The host series the rules read, which alert needs each, and what makes a job export it. */
export const NEEDED_SERIES: { series: string; neededBy: string; restore: string }[] = [
  {
    series: 'node_netstat_Udp_RcvbufErrors',
    neededBy: 'SockbufUdpReceiveBufferErrors',
    restore:
      "node_exporter's netstat collector (on by default), or sockbuf exporter without --no-host-counters",
  },
  {
    series: 'node_netstat_TcpExt_ListenDrops',
    neededBy: 'SockbufTcpListenDrops',
    restore:
      "node_exporter's netstat collector (on by default), or sockbuf exporter without --no-host-counters",
  },
  {
    series: 'node_netstat_TcpExt_TCPMemoryPressures',
    neededBy: 'SockbufTcpMemoryPressure',
    restore:
      "node_exporter with --collector.netstat.fields matching TcpExt_TCPMemoryPressures (node_exporter's default leaves it out): " +
      `--collector.netstat.fields='${NETSTAT_FIELDS_WITH_PRESSURE}', or sockbuf exporter without --no-host-counters`,
  },
  {
    series: 'node_softnet_dropped_total',
    neededBy: 'SockbufSoftnetDrops',
    restore:
      "node_exporter's softnet collector (on by default), or sockbuf exporter without --no-host-counters",
  },
  {
    series: 'node_softnet_times_squeezed_total',
    neededBy: 'SockbufSoftnetTimesSqueezed',
    restore:
      "node_exporter's softnet collector (on by default), or sockbuf exporter without --no-host-counters",
  },
];

/** `instance` less its port: the host, so that node_exporter (:9100) and sockbuf (:9477) meet. */
const byHost = (expr: string) => `label_replace(${expr}, "host", "$1", "instance", "(.+):[0-9]+")`;

/** The guards: the exporter down, a collector failing, a needed host series absent. */
export function guardRules(): RuleGroup {
  return {
    name: 'sockbuf-guards',
    rules: [
      {
        alert: 'SockbufExporterDown',
        // a target that has exported sockbuf_build_info in the last day, whatever its job is called
        expr: 'up == 0 and on(instance, job) last_over_time(sockbuf_build_info[1d])',
        for: '5m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'sockbuf exporter {{ $labels.instance }} (job {{ $labels.job }}) is down',
          description:
            'Prometheus cannot scrape {{ $labels.instance }}: no socket or host series, and no sockbuf alert ' +
            'can fire for it. Check the service (systemctl status sockbuf-exporter, or the pod) and its log.',
        },
      },
      {
        alert: 'SockbufCollectorFailed',
        expr: 'sockbuf_scrape_collector_success == 0',
        for: '5m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'sockbuf exporter {{ $labels.instance }}: collector {{ $labels.collector }} fails',
          description:
            'The collector {{ $labels.collector }} failed in its last run on {{ $labels.instance }}: its series are ' +
            "left out, and the alerts over them cannot fire. The exporter's log (stderr) says why.",
        },
      },
      ...NEEDED_SERIES.map(({ series, neededBy, restore }) => ({
        alert: 'SockbufSeriesAbsent',
        expr:
          `${byHost('group by(instance, job) (sockbuf_build_info)')}\n` +
          `unless on(host)\n${byHost(`group by(instance) (${series})`)}`,
        for: '15m',
        labels: { severity: 'warning' as const, series },
        annotations: {
          summary: `No job exports ${series} for the host of {{ $labels.instance }}: ${neededBy} cannot fire there`,
          description:
            `${neededBy} reads ${series}, and no target on the host of {{ $labels.instance }} exports it. ` +
            `To restore it: ${restore}.`,
        },
      })),
    ],
  };
}
