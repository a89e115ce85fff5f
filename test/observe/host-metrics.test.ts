// node_exporter's host series as a real Prometheus parser reads them (prometheus_client, Debian's
// python3-prometheus-client, run with /usr/bin/python3), and the per-socket labels that do not churn.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { listeningPorts, socketSeries } from '../../src/observe/exporter.js';
import { startExporter } from '../../src/observe/exporter-server.js';
import {
  BUFFER_NETSTAT_FIELDS,
  NODE_EXPORTER_NETSTAT_FIELDS,
  netstatFields,
} from '../../src/observe/host-metrics.js';
import { parseSockstat, parseSoftnet } from '../../src/observe/proc.js';
import { pageSize } from '../../src/sys/libc.js';

const PARSE = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
# NaN (prom-client's event-loop gauges before their first sample) as a string: JSON has no NaN
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "samples": [[s.name, s.labels, s.value if math.isfinite(s.value) else str(s.value)] for s in f.samples]})
print(json.dumps(out))
`;
const hasParser =
  spawnSync('/usr/bin/python3', ['-c', 'from prometheus_client.parser import text_string_to_metric_families'])
    .status === 0;

type Family = { name: string; type: string; samples: [string, Record<string, string>, number][] };

/** The exposition as prometheus_client parses it: every sample by its name. */
function parse(text: string): Map<string, { type: string; labels: Record<string, string>; value: number }[]> {
  const r = spawnSync('/usr/bin/python3', ['-c', PARSE], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = new Map<string, { type: string; labels: Record<string, string>; value: number }[]>();
  for (const f of JSON.parse(r.stdout) as Family[])
    for (const [name, labels, value] of f.samples)
      out.set(name, [...(out.get(name) ?? []), { type: f.type, labels, value }]);
  return out;
}

test("the exposition parses with prometheus_client; node_exporter's netstat, softnet and sockstat names", {
  skip: !hasParser && '/usr/bin/python3 with prometheus_client (python3-prometheus-client) is not installed',
}, async () => {
  const exp = await startExporter({ port: 0 });
  const bare = await startExporter({ port: 0, hostCounters: false });
  try {
    const m = parse(await (await fetch(exp.url)).text());
    for (const name of [
      'node_netstat_TcpExt_SyncookiesSent',
      'node_netstat_TcpExt_SyncookiesRecv',
      'node_netstat_TcpExt_SyncookiesFailed',
      'node_netstat_TcpExt_ListenOverflows',
      'node_netstat_TcpExt_ListenDrops',
      'node_netstat_TcpExt_TCPSynRetrans',
      'node_netstat_TcpExt_TCPTimeouts',
      'node_netstat_IpExt_InOctets',
      'node_netstat_IpExt_OutOctets',
      'node_netstat_Ip_Forwarding',
      'node_netstat_Icmp_InMsgs',
      'node_netstat_Icmp_OutMsgs',
      'node_netstat_Icmp6_InMsgs',
      'node_netstat_Icmp6_OutMsgs',
      'node_netstat_Udp6_InErrors',
      'node_netstat_UdpLite_InErrors',
      'node_netstat_Udp_RcvbufErrors',
      'node_netstat_TcpExt_TCPRcvCollapsed',
      'node_sockstat_sockets_used',
      'node_sockstat_TCP_inuse',
      'node_sockstat_TCP_tw',
      'node_sockstat_TCP_mem',
      'node_sockstat_TCP_mem_bytes',
      'node_sockstat_UDP_inuse',
      'node_sockstat_UDP_mem_bytes',
      'node_sockstat_TCP6_inuse',
      'node_sockstat_UDP6_inuse',
    ]) {
      const s = m.get(name);
      assert.ok(s?.length === 1, `${name} exported once`);
      assert.deepEqual(s[0].labels, {}, `${name} has no labels`);
      assert.ok(Number.isFinite(s[0].value), name);
    }
    assert.equal(
      m.get('node_sockstat_TCP_mem_bytes')?.[0].value,
      (m.get('node_sockstat_TCP_mem')?.[0].value ?? 0) * pageSize(),
    );
    for (const name of [
      'node_softnet_processed_total',
      'node_softnet_dropped_total',
      'node_softnet_times_squeezed_total',
    ]) {
      const s = m.get(name) ?? [];
      assert.equal(s[0]?.type, 'counter', `${name} is a counter`);
      const cpus = s.map((x) => x.labels.cpu).sort();
      assert.equal(cpus.length, availableParallelism(), `${name}: one series per CPU`);
      assert.deepEqual(Object.keys(s[0].labels), ['cpu']);
      assert.ok(cpus.every((c) => /^\d+$/.test(c)));
    }
    assert.ok((m.get('node_softnet_processed_total') ?? []).some((s) => s.value > 0));
    // --no-host-counters: none of node_exporter's series, sockbuf's own still there
    const b = parse(await (await fetch(bare.url)).text());
    assert.deepEqual(
      [...b.keys()].filter((n) => n.startsWith('node_')),
      [],
    );
    assert.ok(b.has('sockbuf_sockets'));
  } finally {
    await exp.close();
    await bare.close();
  }
});

test("netstat fields: node_exporter's default pattern plus the buffer-related ones, nothing else", () => {
  const present = {
    Ip: { Forwarding: 1, DefaultTTL: 64, InReceives: 5 },
    IpExt: { InOctets: 1, OutOctets: 2, InNoRoutes: 0 },
    TcpExt: {
      SyncookiesSent: 0,
      ListenDrops: 0,
      TCPSynRetrans: 0,
      TCPTimeouts: 0,
      DelayedACKs: 9,
      PruneCalled: 0,
    },
    Udp: { InErrors: 0, InCsumErrors: 0, IgnoredMulti: 0 },
    UdpLite: { InErrors: 0, InDatagrams: 0 },
  };
  assert.deepEqual(netstatFields(present).sort(), [
    'IpExt_InOctets',
    'IpExt_OutOctets',
    'Ip_Forwarding',
    'TcpExt_ListenDrops',
    'TcpExt_PruneCalled',
    'TcpExt_SyncookiesSent',
    'TcpExt_TCPSynRetrans',
    'TcpExt_TCPTimeouts',
    'UdpLite_InErrors',
    'Udp_InCsumErrors',
    'Udp_InErrors',
  ]);
  assert.ok(
    NODE_EXPORTER_NETSTAT_FIELDS.test('Tcp_CurrEstab') && !BUFFER_NETSTAT_FIELDS.test('Tcp_CurrEstab'),
  );
});

test('softnet_stat: the CPU column where the kernel prints it, else the line; sockstat lines', () => {
  const cols = (cpu: number) => [
    '0000000a',
    '00000002',
    '00000003',
    ...Array(9).fill('00000000'),
    cpu.toString(16).padStart(8, '0'),
  ];
  assert.deepEqual(parseSoftnet(`${cols(0).join(' ')}\n${cols(3).join(' ')}\n`), [
    { cpu: 0, processed: 10, dropped: 2, timeSqueezed: 3 },
    { cpu: 3, processed: 10, dropped: 2, timeSqueezed: 3 },
  ]);
  assert.deepEqual(
    parseSoftnet('00000001 00000000 00000000\n00000002 00000001 00000000\n').map((r) => r.cpu),
    [0, 1],
  );
  assert.deepEqual(
    parseSockstat('sockets: used 42\nTCP: inuse 3 orphan 0 tw 13 alloc 4 mem 413\nUDP: inuse 0 mem 0\n'),
    {
      sockets: { used: 42 },
      TCP: { inuse: 3, orphan: 0, tw: 13, alloc: 4, mem: 413 },
      UDP: { inuse: 0, mem: 0 },
    },
  );
});

test("per-socket labels: a listener's connections by local port, a client by the port it connects to", () => {
  const row = (r: Partial<InspectedSocket>) =>
    ({ protocol: 'tcp', state: 'established', ...r }) as InspectedSocket;
  const rows = [
    row({
      state: 'listen',
      localAddress: '10.0.0.1',
      localPort: 5201,
      remoteAddress: '0.0.0.0',
      remotePort: 0,
    }),
    row({ localAddress: '10.0.0.1', localPort: 5201, remoteAddress: '10.0.0.9', remotePort: 40001 }),
    row({ localAddress: '10.0.0.1', localPort: 5201, remoteAddress: '10.0.0.7', remotePort: 51234 }),
    row({ localAddress: '10.0.0.1', localPort: 47000, remoteAddress: '10.0.0.2', remotePort: 6379 }),
    row({
      protocol: 'udp',
      state: 'unconnected',
      localAddress: '0.0.0.0',
      localPort: 8125,
      remoteAddress: '0.0.0.0',
      remotePort: 0,
    }),
  ];
  const ports = listeningPorts(rows);
  const labels = rows.map((r) => socketSeries(r, ports));
  const listener = { protocol: 'tcp', role: 'listener', address: '10.0.0.1', port: '5201' };
  assert.deepEqual(labels, [
    listener,
    listener,
    listener,
    { protocol: 'tcp', role: 'client', address: '10.0.0.2', port: '6379' },
    { protocol: 'udp', role: 'listener', address: '0.0.0.0', port: '8125' },
  ]);
  // no ephemeral port in any label set: connections come and go, the series stay
  assert.ok(labels.every((l) => !['40001', '51234', '47000'].includes(l.port)));
});
