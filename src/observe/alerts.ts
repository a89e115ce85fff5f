// Prometheus alerting rules over the exporter's series (exporter.ts, host-metrics.ts): which socket is
// limited by a pinned buffer or drops, and which host counters rise, each with what to do in the
// words the doctor and inspect use (src/policy/advice.ts). Pure: `alertRules()` builds the rules,
// `rulesYaml()` writes the file `sockbuf exporter --print-rules` prints and docs/deploy/sockbuf-rules.yml holds.
import { ADVICE, type Advice } from '../policy/advice.js';
import type { AlertRule, RuleGroup } from './alert-rule.js';
import { LIMITED_PCT } from './analyze.js';
import { guardRules } from './guard-alerts.js';
import { SETTERS, type Setter } from './programs.js';

/**
 * Where the runbooks are: docs/runbooks.md, one section per alert, its anchor the alert's name in
 * lower case. Where a team serves them from elsewhere (its wiki, its copy of the docs), `sockbuf
 * exporter --print-rules --runbook-url URL` writes the rules with that page instead.
 */
export const RUNBOOKS = 'https://sockbuf.dev/docs/runbooks.md';

/** Every rule, the guards (guard-alerts.ts) included, each with its runbook_url (`runbooks`#alert). Pure. */
export function alertRules(runbooks = RUNBOOKS): RuleGroup[] {
  return [...sockbufRules(), guardRules()].map((g) => ({
    ...g,
    rules: g.rules.map((r) => ({
      ...r,
      annotations: { ...r.annotations, runbook_url: `${runbooks}#${r.alert.toLowerCase()}` },
    })),
  }));
}

/** The labels that name a socket series (exporter.ts socketSeries), with the exporter's instance. */
const SERIES = 'on(instance, job, protocol, role, address, port, pid, command)';
const SHARE = LIMITED_PCT / 100;
/** "Carrying load": busy sending at least this share of the time between two scrapes. */
const BUSY = 0.1;

/**
 * A socket series in words: `tcp listener 127.0.0.1:5201`, `tcp connection accepted at 10.0.0.2:6000`
 * (its listener gone) or `tcp socket to [::1]:5201`.
 */
const SOCKET =
  '{{ $labels.protocol }} {{ if eq $labels.role "listener" }}listener{{ else if eq $labels.role "accepted" }}' +
  'connection accepted at{{ else }}socket to{{ end }} ' +
  '{{ if match ":" $labels.address }}[{{ $labels.address }}]{{ else }}{{ $labels.address }}{{ end }}:{{ $labels.port }}';

/** The selector of this alert's socket series (a listener's has no pid nor command: pid="" matches that). */
const THIS = (metric: string, extra = '') =>
  `printf \`${metric}{instance=%q,protocol=%q,role=%q,address=%q,port=%q,pid=%q,command=%q${extra}}\` ` +
  '$labels.instance $labels.protocol $labels.role $labels.address $labels.port $labels.pid $labels.command';
/** owner_info of this series: a listener's carries the pids of its sockets, a client's its own. */
const OWNER =
  'printf `sockbuf_socket_owner_info{instance=%q,protocol=%q,role=%q,address=%q,port=%q,pid=~%q}` ' +
  '$labels.instance $labels.protocol $labels.role $labels.address $labels.port (or $labels.pid ".*")';

/** ` (command, pid N)` from sockbuf_socket_owner_info when the exporter could read the owner. */
const PROCESS = `{{ range ${OWNER} | query }} ({{ .Labels.command }}, pid {{ .Labels.pid }}){{ end }}`;

/** `beam.smp (pid 42)` or `a process`: the owner as the subject of a sentence. */
const OWNER_NAME =
  `{{ with ${OWNER} | query }}{{ with index . 0 }}{{ .Labels.command }} (pid {{ .Labels.pid }}){{ end }}` +
  '{{ else }}a process{{ end }}';

/** A series' value as bytes: `32768 bytes` (exact: a pinned size is the program's number, doubled). */
const BYTES = (metric: string) =>
  `{{ with ${THIS(metric)} | query }}{{ index . 0 | value | printf "%.0f" }} bytes{{ else }}an unknown size{{ end }}`;

/** tcp_rmem/tcp_wmem max of the alert's host (sockbuf_autotuning_max_bytes). */
const AUTOTUNING = (buffer: 'receive' | 'send') =>
  `{{ with printf \`sockbuf_autotuning_max_bytes{instance=%q,buffer="${buffer}"}\` $labels.instance | query }}` +
  `up to {{ index . 0 | value | humanize1024 }}B{{ else }}more{{ end }}`;

/** `; peers 10.0.0.2, 10.0.0.3` for a listener (sockbuf_socket_peer_info), nothing for a client (its address is the peer). */
const PEERS = `{{ with ${THIS('sockbuf_socket_peer_info', ',peer!=""')} | query }}; peers {{ (index . 0).Labels.peer }}{{ end }}`;

/** sockbuf_socket_pin_info of this series for one buffer: who set it, whether at the ceiling. */
const PIN = (buffer: 'receive' | 'send') => THIS('sockbuf_socket_pin_info', `,buffer="${buffer}"`);

/**
 * What to change in the setting program's own terms, told per socket by the exporter
 * (sockbuf_socket_pin_info's setter, from programs.ts), else `generic`: a template chain on the id.
 */
const IN_PROGRAM = (
  buffer: 'receive' | 'send',
  text: (p: Setter) => string | undefined,
  generic: string,
  before = 'In ',
) => {
  const known = SETTERS.filter((p) => text(p));
  return (
    `{{ $setter := "" }}{{ with ${PIN(buffer)} | query }}{{ $setter = (index . 0).Labels.setter }}{{ end }}` +
    known
      .map(
        (p, i) =>
          `{{ ${i ? 'else if' : 'if'} eq $setter "${p.id}" }}${before}${p.command} (${p.what}): ${text(p)}.`,
      )
      .join('') +
    `{{ else }}${generic}{{ end }}`
  );
};

const SYSCTL = { receive: 'net.core.rmem_max', send: 'net.core.wmem_max' } as const;
/** The setters whose words carry their own ways out (osiris): the ceiling then leaves out the generic two. */
const OWN_WAYS_OUT = SETTERS.filter((p) => p.waysOut)
  .map((p) => `(eq .Labels.setter "${p.id}")`)
  .join(' ');
/**
 * ` It sits at the kernel's ceiling, 2 × net.core.rmem_max (…)` where the exporter saw the series'
 * pinned buffer at twice the sysctl, ` net.core.rmem_max is unknown …` where it could not read it,
 * nothing below the ceiling (sockbuf_socket_pin_info's ceiling, sockbuf_setsockopt_max_bytes).
 */
const CEILING = (buffer: 'receive' | 'send', lead = ' It') => {
  const name = SYSCTL[buffer];
  const value =
    `{{ with printf \`sockbuf_setsockopt_max_bytes{instance=%q,buffer="${buffer}"}\` $labels.instance | query }}` +
    ` (${name} = {{ index . 0 | value | printf "%.0f" }}){{ end }}`;
  return (
    `{{ with ${PIN(buffer)} | query }}{{ with index . 0 }}{{ if eq .Labels.ceiling "yes" }}${lead} sits at the ` +
    `kernel's ceiling, 2 × ${name}${value}: the program asked ${buffer === 'receive' ? 'SO_RCVBUF' : 'SO_SNDBUF'} for at least that ` +
    `much and the kernel clamped it, where autotuning would allow ${AUTOTUNING(buffer)}{{ if not (or ${OWN_WAYS_OUT}) }}; two ways out: stop setting it, or raise ` +
    `${name}, which keeps it pinned{{ end }}.{{ else if eq .Labels.ceiling "unknown" }} ${name} is unknown on this host (the exporter ` +
    `cannot read it), so whether this size is the kernel's ceiling is unknown.{{ end }}{{ end }}{{ end }}`
  );
};

/**
 * What SockbufSendBufferPinned states: sndbuf-limited N % of busy time where the kernel's counter
 * says so, else busy N % of the time with the queue at the limit (its expression's first branch, whose
 * value is the busy ratio: the counter misses a pinned send buffer, docs/diagnosis.md).
 */
const SNDBUF_SHARE =
  `{{ with ${THIS('sockbuf_socket_sndbuf_limited_ratio')} | query }}{{ if gt (index . 0 | value) ${LIMITED_PCT / 100} }}` +
  'sndbuf-limited {{ index . 0 | value | humanizePercentage }} of its busy time{{ else }}' +
  'busy {{ $value | humanizePercentage }} of the time with its send queue at the limit{{ end }}{{ else }}' +
  'busy {{ $value | humanizePercentage }} of the time with its send queue at the limit{{ end }}';

/** A rate: `10`, `0.0167` (humanize would say `16.67m`). */
const RATE = '{{ $value | printf "%.3g" }}';

/** ` (beam.smp, pid 42)` for a series `$s` of the range: its owner, from sockbuf_socket_owner_info. */
const OWNER_OF_S =
  '{{ range printf `sockbuf_socket_owner_info{instance=%q,protocol=%q,role=%q,address=%q,port=%q}` ' +
  '$s.Labels.instance $s.Labels.protocol $s.Labels.role $s.Labels.address $s.Labels.port | query }}' +
  ' ({{ .Labels.command }}, pid {{ .Labels.pid }}){{ end }}';

/**
 * ` Sockets dropping: a:p (beam.smp, pid 42) (10/s), b:p (2/s).`: this instance's sockets whose
 * `series` rose in 5 minutes, each with its process where the exporter could read the owner.
 */
const sockets = (series: string, what: string) =>
  `{{ with printf \`topk(5, rate(${series.replace('}', ',instance=%q}')}[5m]) > 0)\` $labels.instance | query }}` +
  ` ${what}: {{ range $i, $s := . }}{{ if $i }}, {{ end }}{{ $s.Labels.address }}:{{ $s.Labels.port }}` +
  `${OWNER_OF_S} ({{ $s.Value | printf "%.3g" }}/s){{ end }}.{{ end }}`;

const advise = (a: Advice, where = '') => `Cause: ${a.cause}. What to do${where}: ${a.fix}.`;

const rule = (
  alert: string,
  expr: string,
  duration: string,
  severity: AlertRule['labels']['severity'],
  summary: string,
  description: string,
): AlertRule => ({ alert, expr, for: duration, labels: { severity }, annotations: { summary, description } });

/** The rules, in two groups: per socket (named by address, port and process) and per host. */
function sockbufRules(): RuleGroup[] {
  const limited = (ratio: string, kind: string) =>
    `sockbuf_socket_${ratio}_limited_ratio > ${SHARE}\n` +
    `  and ${SERIES} sockbuf_socket_busy_ratio > ${BUSY}\n` +
    `  and ${SERIES} sockbuf_socket_flagged{kind="${kind}"} == 1`;
  const host = (counter: string) => `sum by(instance, job) (rate(${counter}[5m])) > 0`;
  return [
    {
      name: 'sockbuf-sockets',
      rules: [
        rule(
          'SockbufRwndLimitedByPinnedReceiveBuffer',
          limited('rwnd', 'rwnd-limited'),
          '10m',
          'warning',
          `${SOCKET}${PROCESS} is rwnd-limited {{ $value | humanizePercentage }} of its busy time: its peer pinned its receive buffer`,
          `On {{ $labels.instance }} it carries load and the peer's receive window holds it back ` +
            `(rwnd-limited above ${SHARE * 100}% of busy time); the peer's window scale and window show a small ` +
            `pinned receive buffer. ${advise(ADVICE.pinnedRcvbuf, ' (on the receiving side)')}` +
            `${CEILING('send', ' Its own send buffer is pinned too: it')}` +
            IN_PROGRAM(
              'send',
              (p) => p.peerRcvbuf && `${p.peerRcvbuf}; its own send buffer: ${p.sndbuf}`,
              '',
              ' In ',
            ) +
            ' Where the receiver is another host with sockbuf, its SockbufReceiveBufferPinned alert names the program.',
        ),
        rule(
          'SockbufReceiveBufferPinned',
          'sockbuf_socket_flagged{kind="pinned-rcvbuf"} == 1',
          '10m',
          'warning',
          `${OWNER_NAME} pinned the receive buffer of ${SOCKET} to ${BYTES('sockbuf_socket_receive_buffer_bytes')} ` +
            `where autotuning offers ${AUTOTUNING('receive')}: its window limits its senders${PEERS}`,
          `On {{ $labels.instance }} its receive buffer is far below tcp_rmem max and its ` +
            `window scale below what autotuning offers, while data keeps arriving at about a window per round trip ` +
            '(queue half full, drops, or its sender rwnd-limited); the size is skmem rb, twice what the program set. ' +
            `Cause: ${ADVICE.pinnedRcvbuf.cause}.${CEILING('receive')} What to do: ` +
            IN_PROGRAM('receive', (p) => p.rcvbuf, `${ADVICE.pinnedRcvbuf.fix}.`) +
            ' Confirm with sockbuf inspect --port {{ $labels.port }} (or ss -tmi: rb, wscale).',
        ),
        rule(
          'SockbufSendBufferPinned',
          `sockbuf_socket_busy_ratio > ${BUSY}\n` +
            `  and ${SERIES} sockbuf_socket_flagged{kind="pinned-sndbuf"} == 1\n` +
            `  or ${limited('sndbuf', 'sndbuf-limited')}`,
          '10m',
          'warning',
          `${OWNER_NAME} pinned the send buffer of ${SOCKET} to ${BYTES('sockbuf_socket_send_buffer_bytes')} ` +
            `where autotuning offers ${AUTOTUNING('send')}: ${SNDBUF_SHARE}${PEERS}`,
          `On {{ $labels.instance }} it carries load and its own send buffer holds it back: the send queue ` +
            `stays at a limit far below tcp_wmem max with less in flight than cwnd and the peer's window allow ` +
            `(or sndbuf-limited above ${SHARE * 100}% of busy time), so it moves about one buffer per round trip; ` +
            "below two segments each round trip waits for the peer's delayed ACK; the size is skmem tb, twice what " +
            `the program set. Cause: ${ADVICE.pinnedSndbuf.cause}.${CEILING('send')} ` +
            `What to do: ${IN_PROGRAM('send', (p) => p.sndbuf, `${ADVICE.pinnedSndbuf.fix}.`)}` +
            ' Confirm with sockbuf inspect --port {{ $labels.port }} (or ss -tmi: tb, Send-Q, rtt against minrtt).',
        ),
        rule(
          'SockbufStalledReader',
          'sockbuf_socket_flagged{kind="stalled-reader"} == 1',
          '5m',
          'warning',
          `${SOCKET}${PROCESS}: a reader stopped reading (zero window, ` +
            `${BYTES('sockbuf_socket_receive_queue_bytes')} queued)${PEERS}`,
          `On {{ $labels.instance }} a connection of this series has a full receive queue and advertises a zero ` +
            `window, with nothing received for a second or more (seen at the reader, or at the sender by the zero ` +
            `window it probes). ${advise(ADVICE.stalledReader)} Confirm with sockbuf inspect --port {{ $labels.port }} ` +
            '(or ss -tmi: Recv-Q at rb, a persist timer at the sender).',
        ),
        rule(
          'SockbufUdpSocketDrops',
          'rate(sockbuf_socket_drops_total{protocol="udp"}[5m]) > 0',
          '5m',
          'warning',
          `${SOCKET}${PROCESS} drops ${RATE} datagrams/s: its receive buffer is full`,
          `On {{ $labels.instance }} the socket keeps dropping datagrams (skmem d rising). ` +
            advise(ADVICE.udpRcvbuf),
        ),
      ],
    },
    {
      name: 'sockbuf-host',
      rules: [
        rule(
          'SockbufUdpReceiveBufferErrors',
          // rate() drops the name: the IPv6 counter gets a label so that the two stay apart in `or`
          'sum by(instance, job) (\n  rate(node_netstat_Udp_RcvbufErrors[5m])\n' +
            '  or label_replace(rate(node_netstat_Udp6_RcvbufErrors[5m]), "ip", "6", "", "")\n) > 0',
          '5m',
          'warning',
          `{{ $labels.instance }} drops ${RATE} UDP datagrams/s on full receive buffers`,
          `Udp RcvbufErrors rise on {{ $labels.instance }}.${sockets('sockbuf_socket_drops_total{protocol="udp"}', 'Sockets dropping')} ` +
            advise(ADVICE.udpRcvbuf),
        ),
        rule(
          'SockbufTcpListenDrops',
          host('node_netstat_TcpExt_ListenDrops'),
          '5m',
          'warning',
          `{{ $labels.instance }} drops ${RATE} incoming TCP connections/s at full accept queues`,
          `TcpExt ListenDrops (ListenOverflows included) rise on {{ $labels.instance }}.` +
            `${sockets('sockbuf_socket_listen_drops_total{protocol="tcp",role="listener"}', 'Listeners dropping')} ` +
            advise(ADVICE.listenDrops),
        ),
        rule(
          'SockbufTcpMemoryPressure',
          host('node_netstat_TcpExt_TCPMemoryPressures'),
          '1m',
          'warning',
          '{{ $labels.instance }} enters TCP memory pressure',
          `TcpExt TCPMemoryPressures rises on {{ $labels.instance }}. ${advise(ADVICE.tcpMemoryPressure)}`,
        ),
        rule(
          'SockbufSoftnetDrops',
          host('node_softnet_dropped_total'),
          '5m',
          'warning',
          `{{ $labels.instance }} drops ${RATE} received packets/s at full CPU backlogs`,
          `softnet_stat drops rise on {{ $labels.instance }}. ${advise(ADVICE.softnetDropped)}`,
        ),
        rule(
          'SockbufSoftnetTimesSqueezed',
          host('node_softnet_times_squeezed_total'),
          '15m',
          'info',
          `{{ $labels.instance }} runs out of receive budget ${RATE} times/s`,
          `softnet_stat time squeezes rise on {{ $labels.instance }}. ${advise(ADVICE.softnetSqueezed)}`,
        ),
      ],
    },
  ];
}

/**
 * A YAML scalar: a JSON string is a YAML double-quoted scalar; a multi-line one becomes a literal
 * block, a long one a folded block (broken at single spaces, which folding turns back into spaces).
 */
function scalar(value: string, indent: string): string {
  const block = (style: string, lines: string[]) =>
    `${style}\n${lines.map((l) => `${indent}${l}`).join('\n')}`;
  if (value.includes('\n')) return block('|-', value.split('\n'));
  if (value.length <= 80 || /\s\s|^\s|\s$/.test(value))
    // single quotes spare the escapes where the text has double ones (as Biome formats YAML)
    return value.includes('"') && !/['\\]/.test(value) ? `'${value}'` : JSON.stringify(value);
  const lines: string[] = [];
  for (const word of value.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + word.length < 96) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return block('>-', lines);
}

/** The rules file (Prometheus rule_files format), generated. Pure. */
export function rulesYaml(groups: RuleGroup[] = alertRules()): string {
  const out = [
    '# sockbuf alerting rules over `sockbuf exporter` series (generated: sockbuf exporter --print-rules).',
    '# Load with rule_files in prometheus.yml; check with promtool check rules.',
    'groups:',
  ];
  for (const g of groups) {
    out.push(`  - name: ${JSON.stringify(g.name)}`, '    rules:');
    for (const r of g.rules) {
      out.push(
        `      - alert: ${JSON.stringify(r.alert)}`,
        `        expr: ${scalar(r.expr, '          ')}`,
        `        for: ${JSON.stringify(r.for)}`,
        '        labels:',
        ...Object.entries(r.labels).map(([k, v]) => `          ${k}: ${JSON.stringify(v)}`),
        '        annotations:',
        ...Object.entries(r.annotations).map(([k, v]) => `          ${k}: ${scalar(v, '            ')}`),
      );
    }
  }
  return `${out.join('\n')}\n`;
}
