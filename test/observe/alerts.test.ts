// The shipped alerting rules (docs/deploy/sockbuf-rules.yml) against the real promtool (Debian package
// `prometheus`, installed by .ci/run): the file is what `sockbuf exporter --print-rules` prints,
// `promtool check rules` accepts it, and `promtool test rules` runs input series for every alert,
// firing and not firing, with the annotations each one renders (socket, process, what to do).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { alertRules, RUNBOOKS, rulesYaml } from '../../src/observe/alerts.js';
import { NEEDED_SERIES } from '../../src/observe/guard-alerts.js';
import { SETTERS } from '../../src/observe/programs.js';
import { ADVICE, type Advice } from '../../src/policy/advice.js';

const RULES = fileURLToPath(new URL('../../docs/deploy/sockbuf-rules.yml', import.meta.url));

function promtool(...args: string[]) {
  const r = spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 });
  if (r.error)
    throw new Error(`promtool: ${r.error.message} (Debian package prometheus; .ci/run installs it)`);
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

test('docs/deploy/sockbuf-rules.yml is what rulesYaml() writes, and promtool check rules accepts it', () => {
  assert.equal(
    readFileSync(RULES, 'utf8'),
    rulesYaml(),
    'regenerate it: node dist/cli/main.js exporter --print-rules > docs/deploy/sockbuf-rules.yml',
  );
  const names = alertRules().flatMap((g) => g.rules.map((r) => r.alert));
  const r = promtool('check', 'rules', '--lint=all', '--lint-fatal', RULES);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`SUCCESS: ${names.length} rules found`));
});

test('promtool check rules fails on a broken rule (the check can fail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-rules-'));
  try {
    const broken = join(dir, 'broken.yml');
    writeFileSync(
      broken,
      rulesYaml().replace('sockbuf_socket_busy_ratio > 0.1', 'sockbuf_socket_busy_ratio >'),
    );
    assert.notEqual(promtool('check', 'rules', broken).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- promtool test rules: one scrape a minute, host1 misbehaves, host2 does not ----

const H1 = { instance: 'host1:9477', job: 'sockbuf' };
const H2 = { instance: 'host2:9477', job: 'sockbuf' };
const H3 = { instance: 'host3:9477', job: 'sockbuf' };
const H4 = { instance: 'host4:9477', job: 'sockbuf' };
type Labels = Record<string, string>;
const series = (name: string, labels: Labels, values: string) => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',')}}`,
  values,
});
const sock = (protocol: string, role: string, address: string, port: string) => ({
  ...H1,
  protocol,
  role,
  address,
  port,
});
const cause = (a: Advice, where = '') => `Cause: ${a.cause}. What to do${where}: ${a.fix}.`;

const client = { ...sock('tcp', 'client', '10.0.0.2', '5201'), pid: '42' }; // pinned peer, loaded: fires
const unpinned = sock('tcp', 'client', '10.0.0.2', '5202'); // loaded, rwnd-limited, peer not pinned
const idle = sock('tcp', 'client', '10.0.0.2', '5203'); // pinned peer, busy 2 % of the time
const brief = sock('tcp', 'client', '10.0.0.2', '5204'); // pinned peer, loaded for 5 minutes only
const receiver = sock('tcp', 'listener', '::1', '5201'); // pinned receive buffer, no owner known
const sender = { ...sock('tcp', 'client', '10.0.0.3', '9000'), pid: '7' }; // sndbuf-limited 75 %, java
const under = { ...sock('tcp', 'client', '10.0.0.3', '9001'), pid: '7' }; // sndbuf-limited 40 %: below the share
const broker = sock('tcp', 'listener', '127.0.0.1', '5672'); // beam.smp pinned both buffers (seed 000)
const reader = sock('tcp', 'listener', '127.0.0.1', '8081'); // a connection whose reader stopped
const busyConn = sock('tcp', 'listener', '127.0.0.1', '8082'); // an established connection drops, no accept-queue overflow
const statsd = sock('udp', 'listener', '0.0.0.0', '8125'); // drops 10/s
const quiet = sock('udp', 'listener', '0.0.0.0', '8126'); // dropped once, long ago
const web = sock('tcp', 'listener', '127.0.0.1', '8080'); // accept queue overflows 1/s
// osiris (seed 000) at rmem_max = wmem_max = 229376: the follower's replica socket, its listener gone
// (series by local port and command), pinned at the ceiling; the leader's replica reader rwnd-limited
const follower = { ...sock('tcp', 'accepted', '10.0.0.5', '6000'), command: 'beam.smp' };
const leader = { ...sock('tcp', 'client', '10.0.0.6', '6001'), pid: '4300' };

const input = [
  ...[client, unpinned, idle, brief].flatMap((s) => [
    series('sockbuf_socket_rwnd_limited_ratio', s, '0.9x40'),
    series('sockbuf_socket_busy_ratio', s, s === idle ? '0.02x40' : '0.8x40'),
  ]),
  ...[client, idle].map((s) => series('sockbuf_socket_flagged', { ...s, kind: 'rwnd-limited' }, '1x40')),
  series('sockbuf_socket_flagged', { ...brief, kind: 'rwnd-limited' }, '1x5 _x35'),
  series('sockbuf_socket_owner_info', { ...client, command: 'blast', pid: '42' }, '1x40'),
  series('sockbuf_socket_flagged', { ...receiver, kind: 'pinned-rcvbuf' }, '1x40'),
  // the exporter could not read rmem_max for this one: unknown, no size guessed
  series(
    'sockbuf_socket_pin_info',
    { ...receiver, buffer: 'receive', setter: '', ceiling: 'unknown' },
    '1x40',
  ),
  series('sockbuf_socket_flagged', { ...follower, kind: 'pinned-rcvbuf' }, '1x40'),
  series('sockbuf_socket_receive_buffer_bytes', follower, '458752x40'),
  series('sockbuf_socket_owner_info', { ...follower, pid: '4242' }, '1x40'),
  series(
    'sockbuf_socket_pin_info',
    { ...follower, buffer: 'receive', setter: 'osiris-follower', ceiling: 'yes' },
    '1x40',
  ),
  series('sockbuf_socket_rwnd_limited_ratio', leader, '0.88x40'),
  series('sockbuf_socket_busy_ratio', leader, '0.9x40'),
  series('sockbuf_socket_flagged', { ...leader, kind: 'rwnd-limited' }, '1x40'),
  series('sockbuf_socket_owner_info', { ...leader, command: 'beam.smp' }, '1x40'),
  series(
    'sockbuf_socket_pin_info',
    { ...leader, buffer: 'send', setter: 'osiris-leader', ceiling: 'yes' },
    '1x40',
  ),
  series('sockbuf_setsockopt_max_bytes', { ...H1, buffer: 'receive' }, '229376x40'),
  series('sockbuf_setsockopt_max_bytes', { ...H1, buffer: 'send' }, '229376x40'),
  series('sockbuf_socket_sndbuf_limited_ratio', sender, '0.75x40'),
  series('sockbuf_socket_sndbuf_limited_ratio', under, '0.4x40'),
  ...[sender, under].flatMap((s) => [
    series('sockbuf_socket_busy_ratio', s, '0.5x40'),
    series('sockbuf_socket_flagged', { ...s, kind: 'sndbuf-limited' }, '1x40'),
  ]),
  series('sockbuf_socket_owner_info', { ...sender, command: 'java' }, '1x40'),
  series('sockbuf_socket_pin_info', { ...sender, buffer: 'send', setter: 'java', ceiling: 'yes' }, '1x40'),
  series('sockbuf_socket_drops_total', statsd, '0+600x40'),
  series('sockbuf_socket_drops_total', quiet, '500x40'),
  series('sockbuf_socket_owner_info', { ...statsd, command: 'statsd', pid: '100' }, '1x40'),
  series('sockbuf_socket_drops_total', web, '0+60x40'),
  series('sockbuf_socket_listen_drops_total', web, '0+60x40'),
  // its owner (issue 44): the listen-drop alert names the process
  series('sockbuf_socket_owner_info', { ...web, command: 'nginx', pid: '808' }, '1x40'),
  series('sockbuf_socket_drops_total', busyConn, '0+120x40'),
  series('sockbuf_socket_listen_drops_total', busyConn, '0x40'),
  series('sockbuf_socket_flagged', { ...broker, kind: 'pinned-rcvbuf' }, '1x40'),
  series('sockbuf_socket_flagged', { ...broker, kind: 'pinned-sndbuf' }, '1x40'),
  series('sockbuf_socket_busy_ratio', broker, '0.95x40'),
  // the kernel's counter misses a pinned send buffer (issue 43: the summary said "limited 95 %" from busy)
  series('sockbuf_socket_sndbuf_limited_ratio', broker, '0x40'),
  ...(['receive', 'send'] as const).map((buffer) =>
    series('sockbuf_socket_pin_info', { ...broker, buffer, setter: 'rabbitmq-amqp', ceiling: 'no' }, '1x40'),
  ),
  series('sockbuf_socket_receive_buffer_bytes', broker, '32768x40'),
  series('sockbuf_socket_send_buffer_bytes', broker, '32768x40'),
  series('sockbuf_socket_owner_info', { ...broker, command: 'beam.smp', pid: '4242' }, '1x40'),
  series('sockbuf_socket_peer_info', { ...broker, peer: '10.0.0.7' }, '1x40'),
  series('sockbuf_socket_flagged', { ...reader, kind: 'stalled-reader' }, '1x40'),
  series('sockbuf_socket_receive_queue_bytes', reader, '131072x40'),
  series('sockbuf_socket_owner_info', { ...reader, command: 'node', pid: '55' }, '1x40'),
  series('sockbuf_autotuning_max_bytes', { ...H1, buffer: 'receive' }, '33554432x40'),
  series('sockbuf_autotuning_max_bytes', { ...H1, buffer: 'send' }, '4194304x40'),
  series('node_netstat_Udp_RcvbufErrors', H1, '0+600x40'),
  series('node_netstat_Udp6_RcvbufErrors', H1, '0+60x40'),
  series('node_netstat_Udp_RcvbufErrors', H2, '7x40'),
  series('node_netstat_TcpExt_ListenDrops', H1, '0+60x40'),
  series('node_netstat_TcpExt_ListenDrops', H2, '3x40'),
  series('node_netstat_TcpExt_TCPMemoryPressures', H1, '0+1x40'),
  // host2's from node_exporter (port 9100), which the guards must see as the same host
  series('node_netstat_TcpExt_TCPMemoryPressures', { instance: 'host2:9100', job: 'node' }, '0x40'),
  series('node_softnet_dropped_total', { ...H1, cpu: '0' }, '0+120x40'),
  series('node_softnet_dropped_total', { ...H1, cpu: '1' }, '0x40'),
  series('node_softnet_dropped_total', { ...H2, cpu: '0' }, '5x40'),
  series('node_softnet_times_squeezed_total', { ...H1, cpu: '0' }, '0+30x40'),
  series('node_softnet_times_squeezed_total', { ...H2, cpu: '0' }, '0x40'),
  // the guards: host3's exporter stops answering at 10 minutes; host4's host has no node_* series
  ...[H1, H2, H4].flatMap((h) => [
    series('up', h, '1x40'),
    series('sockbuf_build_info', { ...h, version: '0.1.0' }, '1x40'),
  ]),
  series('up', H3, '1x10 0x30'),
  series('sockbuf_build_info', { ...H3, version: '0.1.0' }, '1x10 stale'),
  series('sockbuf_scrape_collector_success', { ...H1, collector: 'sockets' }, '1x40'),
  series('sockbuf_scrape_collector_success', { ...H1, collector: 'owners' }, '0x40'),
];

const known = (id: string) => {
  const p = SETTERS.find((x) => x.id === id);
  assert.ok(p, id);
  return p;
};
const AMQP = known('rabbitmq-amqp');
const JAVA = known('java');
const FOLLOWER = known('osiris-follower');
const LEADER = known('osiris-leader');
const RCV_DESCRIPTION = (port: string, fix: string, ceiling = '') =>
  'On host1:9477 its receive buffer is far below tcp_rmem max and its window scale below what autotuning offers, ' +
  'while data keeps arriving at about a window per round trip (queue half full, drops, or its sender rwnd-limited); ' +
  'the size is skmem rb, twice what the program set. ' +
  `Cause: ${ADVICE.pinnedRcvbuf.cause}.${ceiling} What to do: ${fix} Confirm with sockbuf inspect --port ${port} (or ss -tmi: rb, wscale).`;
const SND_DESCRIPTION = (port: string, fix: string, ceiling = '') =>
  'On host1:9477 it carries load and its own send buffer holds it back: the send queue stays at a limit far below ' +
  "tcp_wmem max with less in flight than cwnd and the peer's window allow (or sndbuf-limited above 50% of busy time), " +
  "so it moves about one buffer per round trip; below two segments each round trip waits for the peer's delayed ACK; " +
  'the size is skmem tb, twice what the program set. ' +
  `Cause: ${ADVICE.pinnedSndbuf.cause}.${ceiling} What to do: ${fix} Confirm with sockbuf inspect --port ${port} (or ss -tmi: tb, Send-Q, rtt against minrtt).`;

const alert = (labels: Labels, summary: string, description: string) => ({
  exp_labels: labels,
  exp_annotations: { summary, description },
});

/** Every alert at 25 minutes: past each `for`, with the series above. */
const firing: Record<string, ReturnType<typeof alert>[]> = {
  SockbufRwndLimitedByPinnedReceiveBuffer: [
    alert(
      { ...client, severity: 'warning' },
      'tcp socket to 10.0.0.2:5201 (blast, pid 42) is rwnd-limited 90% of its busy time: its peer pinned its receive buffer',
      "On host1:9477 it carries load and the peer's receive window holds it back (rwnd-limited above 50% of busy " +
        "time); the peer's window scale and window show a small pinned receive buffer. " +
        cause(ADVICE.pinnedRcvbuf, ' (on the receiving side)') +
        ' Where the receiver is another host with sockbuf, its SockbufReceiveBufferPinned alert names the program.',
    ),
    alert(
      { ...leader, severity: 'warning' },
      'tcp socket to 10.0.0.6:6001 (beam.smp, pid 4300) is rwnd-limited 88% of its busy time: its peer pinned its receive buffer',
      "On host1:9477 it carries load and the peer's receive window holds it back (rwnd-limited above 50% of busy " +
        "time); the peer's window scale and window show a small pinned receive buffer. " +
        cause(ADVICE.pinnedRcvbuf, ' (on the receiving side)') +
        " Its own send buffer is pinned too: it sits at the kernel's ceiling, 2 × net.core.wmem_max (net.core.wmem_max = 229376): " +
        'the program asked SO_SNDBUF for at least that much and the kernel clamped it, where autotuning would allow up to 4MiB.' +
        ` In beam.smp (${LEADER.what}): ${LEADER.peerRcvbuf}; its own send buffer: ${LEADER.sndbuf}.` +
        ' Where the receiver is another host with sockbuf, its SockbufReceiveBufferPinned alert names the program.',
    ),
  ],
  SockbufReceiveBufferPinned: [
    alert(
      { ...receiver, kind: 'pinned-rcvbuf', severity: 'warning' },
      'a process pinned the receive buffer of tcp listener [::1]:5201 to an unknown size where autotuning offers up to 32MiB: its window limits its senders',
      RCV_DESCRIPTION(
        '5201',
        `${ADVICE.pinnedRcvbuf.fix}.`,
        " net.core.rmem_max is unknown on this host (the exporter cannot read it), so whether this size is the kernel's ceiling is unknown.",
      ),
    ),
    alert(
      { ...broker, kind: 'pinned-rcvbuf', severity: 'warning' },
      'beam.smp (pid 4242) pinned the receive buffer of tcp listener 127.0.0.1:5672 to 32768 bytes where autotuning offers up to 32MiB: its window limits its senders; peers 10.0.0.7',
      RCV_DESCRIPTION('5672', `In beam.smp (${AMQP.what}): ${AMQP.rcvbuf}.`),
    ),
    alert(
      { ...follower, kind: 'pinned-rcvbuf', severity: 'warning' },
      'beam.smp (pid 4242) pinned the receive buffer of tcp connection accepted at 10.0.0.5:6000 to 458752 bytes where autotuning offers up to 32MiB: its window limits its senders',
      RCV_DESCRIPTION(
        '6000',
        `In beam.smp (${FOLLOWER.what}): ${FOLLOWER.rcvbuf}.`,
        // osiris's own words carry the ways out (no setting stops the call): not the generic two
        " It sits at the kernel's ceiling, 2 × net.core.rmem_max (net.core.rmem_max = 229376): the program asked SO_RCVBUF " +
          'for at least that much and the kernel clamped it, where autotuning would allow up to 32MiB.',
      ),
    ),
  ],
  SockbufSendBufferPinned: [
    alert(
      { ...broker, severity: 'warning' },
      'beam.smp (pid 4242) pinned the send buffer of tcp listener 127.0.0.1:5672 to 32768 bytes where autotuning offers up to 4MiB: busy 95% of the time with its send queue at the limit; peers 10.0.0.7',
      SND_DESCRIPTION('5672', `In beam.smp (${AMQP.what}): ${AMQP.sndbuf}.`),
    ),
    alert(
      { ...sender, severity: 'warning' },
      'java (pid 7) pinned the send buffer of tcp socket to 10.0.0.3:9000 to an unknown size where autotuning offers up to 4MiB: sndbuf-limited 75% of its busy time',
      SND_DESCRIPTION(
        '9000',
        `In java (${JAVA.what}): ${JAVA.sndbuf}.`,
        " It sits at the kernel's ceiling, 2 × net.core.wmem_max (net.core.wmem_max = 229376): the program asked SO_SNDBUF " +
          'for at least that much and the kernel clamped it, where autotuning would allow up to 4MiB; two ways out: stop ' +
          'setting it, or raise net.core.wmem_max, which keeps it pinned.',
      ),
    ),
  ],
  SockbufStalledReader: [
    alert(
      { ...reader, kind: 'stalled-reader', severity: 'warning' },
      'tcp listener 127.0.0.1:8081 (node, pid 55): a reader stopped reading (zero window, 131072 bytes queued)',
      'On host1:9477 a connection of this series has a full receive queue and advertises a zero window, with ' +
        'nothing received for a second or more (seen at the reader, or at the sender by the zero window it probes). ' +
        `${cause(ADVICE.stalledReader)} Confirm with sockbuf inspect --port 8081 (or ss -tmi: Recv-Q at rb, a persist timer at the sender).`,
    ),
  ],
  SockbufUdpSocketDrops: [
    alert(
      { ...statsd, severity: 'warning' },
      'udp listener 0.0.0.0:8125 (statsd, pid 100) drops 10 datagrams/s: its receive buffer is full',
      `On host1:9477 the socket keeps dropping datagrams (skmem d rising). ${cause(ADVICE.udpRcvbuf)}`,
    ),
  ],
  SockbufUdpReceiveBufferErrors: [
    alert(
      { ...H1, severity: 'warning' },
      'host1:9477 drops 11 UDP datagrams/s on full receive buffers',
      `Udp RcvbufErrors rise on host1:9477. Sockets dropping: 0.0.0.0:8125 (statsd, pid 100) (10/s). ${cause(ADVICE.udpRcvbuf)}`,
    ),
  ],
  SockbufTcpListenDrops: [
    alert(
      { ...H1, severity: 'warning' },
      'host1:9477 drops 1 incoming TCP connections/s at full accept queues',
      'TcpExt ListenDrops (ListenOverflows included) rise on host1:9477. Listeners dropping: 127.0.0.1:8080 (nginx, pid 808) (1/s). ' +
        cause(ADVICE.listenDrops),
    ),
  ],
  SockbufTcpMemoryPressure: [
    alert(
      { ...H1, severity: 'warning' },
      'host1:9477 enters TCP memory pressure',
      `TcpExt TCPMemoryPressures rises on host1:9477. ${cause(ADVICE.tcpMemoryPressure)}`,
    ),
  ],
  SockbufSoftnetDrops: [
    alert(
      { ...H1, severity: 'warning' },
      'host1:9477 drops 2 received packets/s at full CPU backlogs',
      `softnet_stat drops rise on host1:9477. ${cause(ADVICE.softnetDropped)}`,
    ),
  ],
  SockbufExporterDown: [
    alert(
      { ...H3, severity: 'warning' },
      'sockbuf exporter host3:9477 (job sockbuf) is down',
      'Prometheus cannot scrape host3:9477: no socket or host series, and no sockbuf alert can fire for it. ' +
        'Check the service (systemctl status sockbuf-exporter, or the pod) and its log.',
    ),
  ],
  SockbufCollectorFailed: [
    alert(
      { ...H1, collector: 'owners', severity: 'warning' },
      'sockbuf exporter host1:9477: collector owners fails',
      'The collector owners failed in its last run on host1:9477: its series are left out, and the alerts over ' +
        "them cannot fire. The exporter's log (stderr) says why.",
    ),
  ],
  SockbufSeriesAbsent: NEEDED_SERIES.map(({ series, neededBy, restore }) =>
    alert(
      { ...H4, host: 'host4', series, severity: 'warning' },
      `No job exports ${series} for the host of host4:9477: ${neededBy} cannot fire there`,
      `${neededBy} reads ${series}, and no target on the host of host4:9477 exports it. To restore it: ${restore}.`,
    ),
  ),
  SockbufSoftnetTimesSqueezed: [
    alert(
      { ...H1, severity: 'info' },
      'host1:9477 runs out of receive budget 0.5 times/s',
      `softnet_stat time squeezes rise on host1:9477. ${cause(ADVICE.softnetSqueezed)}`,
    ),
  ],
};

test('promtool test rules: every alert fires on its input series and on nothing else', () => {
  const names = [...new Set(alertRules().flatMap((g) => g.rules.map((r) => r.alert)))];
  assert.deepEqual(Object.keys(firing).sort(), [...names].sort(), 'a case for every shipped alert');
  // every alert links its runbook section
  const runbook = (alertname: string) =>
    firing[alertname].map((a) => ({
      ...a,
      exp_annotations: { ...a.exp_annotations, runbook_url: `${RUNBOOKS}#${alertname.toLowerCase()}` },
    }));
  const doc = {
    rule_files: [RULES],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: input,
        alert_rule_test: [
          // before any `for` has passed: pending, not firing
          ...names.map((alertname) => ({ eval_time: '30s', alertname, exp_alerts: [] })),
          ...names.map((alertname) => ({ eval_time: '25m', alertname, exp_alerts: runbook(alertname) })),
        ],
      },
    ],
  };
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-rules-'));
  try {
    // JSON is YAML: promtool reads the test file as written
    const file = join(dir, 'sockbuf-rules.test.yml');
    writeFileSync(file, JSON.stringify(doc, null, 1));
    const r = promtool('test', 'rules', file);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /SUCCESS/);
    // and it can fail: an expectation the rules do not meet
    const udp = doc.tests[0].alert_rule_test.find(
      (t) => t.eval_time === '25m' && t.alertname === 'SockbufUdpSocketDrops',
    );
    assert.ok(udp);
    udp.exp_alerts = [];
    writeFileSync(file, JSON.stringify(doc, null, 1));
    const wrong = promtool('test', 'rules', file);
    assert.notEqual(wrong.code, 0, wrong.out);
    assert.match(wrong.out, /SockbufUdpSocketDrops/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every alert has its runbook section in docs/runbooks.md, and its runbook_url points at it', () => {
  const runbooks = readFileSync(new URL('../../docs/runbooks.md', import.meta.url), 'utf8');
  const sections = [...runbooks.matchAll(/^## (\w+)$/gm)].map((m) => m[1]);
  const rules = alertRules().flatMap((g) => g.rules);
  const names = [...new Set(rules.map((r) => r.alert))];
  assert.deepEqual([...sections].sort(), [...names].sort(), 'one section per alert, no other');
  for (const r of rules) {
    assert.equal(r.annotations.runbook_url, `${RUNBOOKS}#${r.alert.toLowerCase()}`);
    const section = runbooks.split(`## ${r.alert}\n`)[1].split('\n## ')[0];
    for (const part of ['**Means**', '**Confirm**', '**Change**'])
      assert.ok(section.includes(part), `${r.alert}: ${part}`);
  }
  // the node_exporter flag the guard names is the one the runbook gives
  const absent = rules.find((r) => r.labels.series === 'node_netstat_TcpExt_TCPMemoryPressures');
  const flag = /--collector\.netstat\.fields='[^']+'/.exec(absent?.annotations.description ?? '')?.[0];
  assert.ok(flag && runbooks.includes(flag), String(flag));
});
