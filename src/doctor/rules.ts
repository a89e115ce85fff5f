// The doctor's rules: pure functions from the values read off a host (src/doctor/host.ts) and the
// targets (bandwidth, RTT, UDP receive buffer) to findings. Each finding says what the value limits,
// in numbers, and the value that would hold the targets. Nothing here reads or writes the host.
import { ADVICE } from '../policy/advice.js';
import { ceiling, pinnedWindow, windowFor } from '../policy/bdp.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { BUFFER_SYSCTLS } from '../sys/sysctl.js';
import type { CounterBaseline } from './history.js';

export interface HostValues {
  /** Sysctls as numbers (one, or three for tcp_rmem/tcp_wmem/udp_mem); absent ones missing. */
  sysctls: Partial<Record<SysctlName, number[]>>;
  /** /proc/net/snmp Udp counters, since boot. */
  udp?: { RcvbufErrors?: number; InErrors?: number; SndbufErrors?: number };
  /** /proc/net/softnet_stat drops, all CPUs, since boot. */
  softnetDrops?: number;
  /**
   * /proc/sys cannot be written here (a container): recommendations are for the host. Undefined when
   * it could not be told (no net.core.rmem_max under the proc root).
   */
  procSysReadOnly: boolean | undefined;
  /** setsockopt(UDP_SEGMENT) / setsockopt(UDP_GRO) accepted on a UDP socket. */
  udpSegment?: boolean;
  udpGro?: boolean;
  /** Bytes per page (udp_mem counts pages); 4096 when not known. */
  pageSize?: number;
  /** What the drop counters grew by, and since when (src/doctor/history.ts); the boot when absent. */
  baseline?: CounterBaseline;
  /** Checks whose file is there but could not be read or is not what the kernel prints, and why: `unknown`. */
  unreadable?: Record<string, string>;
}

/** The drop counters the doctor judges, by finding name. */
export function dropCounters(h: Pick<HostValues, 'udp' | 'softnetDrops'>): Record<string, number> {
  const all: Record<string, number | undefined> = {
    'Udp.RcvbufErrors': h.udp?.RcvbufErrors,
    'Udp.InErrors': h.udp?.InErrors,
    'Udp.SndbufErrors': h.udp?.SndbufErrors,
    'softnet.dropped': h.softnetDrops,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, number>;
}

/** The buffer sizes the doctor checks against, from bandwidth × RTT. */
export interface DoctorTargets {
  bitsPerSecond: number;
  rttSeconds: number;
  /** The UDP receive buffer wanted, as getsockopt reports it. */
  udpRcvbufBytes: number;
}

export const SYSCTLS = BUFFER_SYSCTLS;
export type SysctlName = (typeof SYSCTLS)[number];

/** ok: holds. low/off: a sysctl below target or a feature switched off. drops: a counter above 0.
 * info: said for context, not a problem. missing: not on this kernel (or this fake /proc). unknown:
 * there but could not be read (EACCES, past its size limit, not what the kernel prints): neither
 * holds nor fails. */
export type FindingStatus = 'ok' | 'low' | 'off' | 'drops' | 'info' | 'missing' | 'unknown';
export const PROBLEMS: readonly FindingStatus[] = ['low', 'off', 'drops'];

/** One check of the host: the setting, its value, the status and the value recommended. */
export interface Finding {
  /** The sysctl, counter ('Udp.RcvbufErrors', 'softnet.dropped') or feature ('UDP_SEGMENT'). */
  name: string;
  kind: 'sysctl' | 'counter' | 'feature' | 'host';
  /** As read: a number, the text of a vector sysctl ('4096 131072 6291456'), a boolean, or null. */
  value: number | string | boolean | null;
  /** The least value that holds the targets (same form as value), or null when there is none. */
  target: number | string | boolean | null;
  status: FindingStatus;
  /** What the value limits, in numbers. */
  explanation: string;
  /** For a sysctl below target: the value to set (same form as value). */
  recommended?: string;
  /** For a counter: how much it grew since `since` (value stays the since-boot total). */
  grew?: number;
  since?: CounterBaseline['kind'];
  sinceSeconds?: number;
  /** For udp_mem: the value and target in bytes (the sysctl counts pages). */
  valueBytes?: number[];
  targetBytes?: number;
}

/** The next power of two ≥ n: the round figure to recommend. */
export function roundUp(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, n)));
}

/** The most an int sysctl takes (rmem_max, wmem_max, tcp_rmem's, netdev_max_backlog): INT_MAX. */
export const SYSCTL_INT_MAX = 2 ** 31 - 1;

/** The round figure to recommend for an int sysctl: never above what the kernel accepts. */
export const recommend = (target: number): number => Math.min(roundUp(target), SYSCTL_INT_MAX);

/** Said when even the largest value the kernel takes falls short of the target. */
const beyond = (target: number) =>
  target > SYSCTL_INT_MAX
    ? `; the kernel takes at most ${SYSCTL_INT_MAX} here, so no setting reaches the target: one stream cannot carry this bandwidth at this RTT`
    : '';

/** A value against its target: ok, or low with the round figure to recommend. */
const min = (v: number, target: number, ok: string, low: string) =>
  v >= target
    ? { target, status: 'ok' as const, explanation: ok }
    : {
        target,
        status: 'low' as const,
        explanation: low + beyond(target),
        recommended: String(recommend(target)),
      };

/** All findings for a host against targets. Pure. */
export function diagnose(h: HostValues, t: DoctorTargets): Finding[] {
  const out: Finding[] = [];
  const R = t.rttSeconds;
  const W = windowFor(t.bitsPerSecond, R);
  const at = `at ${formatDuration(R)} RTT`;
  const need = `${formatBitRate(t.bitsPerSecond)} needs`;
  const cap = (windowBytes: number) => `about ${formatBitRate(ceiling(windowBytes, R))} ${at}`;
  const s = h.sysctls;
  const missing = (name: string, kind: Finding['kind'] = 'sysctl', why = h.unreadable?.[name]): Finding => ({
    name,
    kind,
    value: null,
    target: null,
    status: why === undefined ? 'missing' : 'unknown',
    explanation:
      why === undefined
        ? kind === 'sysctl'
          ? 'not present on this kernel (or this /proc)'
          : 'not available'
        : `could not be read: ${why}`,
  });
  const one = (name: SysctlName, f: (v: number) => Omit<Finding, 'name' | 'kind' | 'value'>) => {
    const v = s[name]?.[0];
    out.push(v === undefined ? missing(name) : { name, kind: 'sysctl', value: v, ...f(v) });
  };
  const three = (name: SysctlName, f: (v: number[]) => Omit<Finding, 'name' | 'kind' | 'value'>) => {
    const v = s[name];
    out.push(
      v === undefined
        ? missing(name)
        : v.length < 3
          ? missing(name, 'sysctl', `three numbers expected, read ${v.length}`)
          : { name, kind: 'sysctl', value: v.join(' '), ...f(v) },
    );
  };
  one('net.core.rmem_max', (v) => {
    const target = Math.max(W, Math.ceil(t.udpRcvbufBytes / 2));
    const what =
      `a pinned SO_RCVBUF is clamped to rmem_max = ${formatSize(v)}, which caps one stream at ${cap(v)}; ` +
      `${need} ${formatSize(W)}. Without CAP_NET_ADMIN a UDP receive buffer reaches at most ${formatSize(2 * v)} ` +
      `(target ${formatSize(t.udpRcvbufBytes)}, which needs rmem_max ≥ ${formatSize(Math.ceil(t.udpRcvbufBytes / 2))})`;
    return min(v, target, what, what);
  });
  one('net.core.wmem_max', (v) => {
    const what =
      `a pinned SO_SNDBUF is clamped to wmem_max = ${formatSize(v)}, which caps one stream at ${cap(v)}; ` +
      `${need} ${formatSize(W)}`;
    return min(v, W, what, what);
  });
  for (const [name, dir] of [
    ['net.ipv4.tcp_rmem', 'receive'],
    ['net.ipv4.tcp_wmem', 'send'],
  ] as const) {
    three(name, (v) => {
      const target = 2 * W;
      const what =
        `autotuning grows a ${dir} buffer up to ${formatSize(v[2])}, a window of about ${formatSize(pinnedWindow(v[2]))}, ` +
        `which caps one stream at ${cap(pinnedWindow(v[2]))}; ${need} a window of ${formatSize(W)}, ` +
        `so a buffer of ${formatSize(target)}`;
      return v[2] >= target
        ? { target: `${v[0]} ${v[1]} ${target}`, status: 'ok', explanation: what }
        : {
            target: `${v[0]} ${v[1]} ${target}`,
            status: 'low',
            explanation: what + beyond(target),
            recommended: `${v[0]} ${v[1]} ${recommend(target)}`,
          };
    });
  }
  one('net.ipv4.tcp_moderate_rcvbuf', (v) => {
    const initial = s['net.ipv4.tcp_rmem']?.[1];
    return v === 1
      ? { target: 1, status: 'ok', explanation: 'receive-buffer autotuning is on' }
      : {
          target: 1,
          status: 'off',
          explanation:
            'receive-buffer autotuning is off: every TCP socket keeps its initial buffer' +
            (initial === undefined
              ? ''
              : ` (tcp_rmem default = ${formatSize(initial)}, ${cap(pinnedWindow(initial))})`),
          recommended: '1',
        };
  });
  one('net.ipv4.tcp_window_scaling', (v) =>
    v === 1
      ? { target: 1, status: 'ok', explanation: 'windows can exceed 64 KiB' }
      : {
          target: 1,
          status: 'off',
          explanation: `window scaling is off: a window is at most 64 KiB, ${cap(65535)}`,
          recommended: '1',
        },
  );
  for (const [name, so, ours] of [
    [
      'net.core.rmem_default',
      'SO_RCVBUF',
      `sockbuf's UDP receiver asks for ${formatSize(t.udpRcvbufBytes)} itself`,
    ],
    ['net.core.wmem_default', 'SO_SNDBUF', 'TCP sockets take tcp_wmem instead'],
  ] as const) {
    one(name, (v) => ({
      target: null,
      status: 'info',
      explanation: `a UDP socket that does not set ${so} (node:dgram, most programs) gets ${formatSize(v)}; ${ours}`,
    }));
  }
  one('net.core.netdev_max_backlog', (v) => {
    // 1500-byte packets at the target rate, during one millisecond a CPU is busy elsewhere
    const perMs = Math.ceil(t.bitsPerSecond / (1500 * 8) / 1000);
    const target = Math.max(1000, perMs);
    const what =
      `each CPU queues up to ${v} received packets before the stack takes them; at ${formatBitRate(t.bitsPerSecond)} ` +
      `${perMs} packets of 1500 bytes arrive per millisecond`;
    return v >= target
      ? { target, status: 'ok', explanation: what }
      : {
          target,
          status: 'low',
          explanation: what + beyond(target),
          recommended: String(Math.min(Math.ceil(target / 1000) * 1000, SYSCTL_INT_MAX)),
        };
  });
  const PAGE = h.pageSize ?? 4096;
  three('net.ipv4.udp_mem', (v) => {
    // udp_mem counts pages: the target is the least `max` (third value) that holds one full buffer
    const target = Math.ceil(t.udpRcvbufBytes / PAGE);
    const bytes = { valueBytes: v.map((x) => x * PAGE), targetBytes: target * PAGE };
    const what =
      `all UDP sockets together may hold ${v[2]} pages = ${formatSize(v[2] * PAGE)} (${formatSize(PAGE)} pages; pressure from ` +
      `${formatSize(v[1] * PAGE)}); one full ${formatSize(t.udpRcvbufBytes)} receive buffer is ${target} pages`;
    return v[2] >= target
      ? { target: `max ≥ ${target}`, status: 'ok', explanation: what, ...bytes }
      : {
          target: `max ≥ ${target}`,
          status: 'low',
          explanation: what,
          recommended: `${v[0]} ${Math.max(v[1], target)} ${roundUp(target * 4)}`,
          ...bytes,
        };
  });
  const base = h.baseline;
  const since =
    base === undefined || base.kind === 'boot'
      ? 'since boot'
      : base.kind === 'sample'
        ? `during the ${formatDuration(base.seconds ?? 0)} sample`
        : `since the last run ${formatDuration(Math.round(base.seconds ?? 0))} ago`;
  const counter = (name: string, value: number | undefined, what: string) => {
    if (value === undefined) {
      out.push(missing(name, 'counter'));
      return;
    }
    const grew = base?.grew[name] ?? value;
    const total = base && base.kind !== 'boot' ? ` (${value} since boot)` : '';
    const again = base?.kind === 'sample' ? '' : '. Run again after your workload to see whether it grows';
    out.push({
      name,
      kind: 'counter',
      value,
      target: 0,
      // only growth is a problem: since-boot totals of a host that dropped once stay information
      status: grew > 0 ? 'drops' : value > 0 ? 'info' : 'ok',
      explanation: `${grew} ${since}${total}: ${what}${again}`,
      grew,
      since: base?.kind ?? 'boot',
      ...(base?.seconds !== undefined ? { sinceSeconds: base.seconds } : {}),
    });
  };
  counter('Udp.RcvbufErrors', h.udp?.RcvbufErrors, `${ADVICE.udpRcvbuf.cause} (${ADVICE.udpRcvbuf.fix})`);
  counter('Udp.InErrors', h.udp?.InErrors, 'datagrams not delivered (receive-buffer drops included)');
  counter('Udp.SndbufErrors', h.udp?.SndbufErrors, 'datagrams not sent because a send buffer was full');
  counter(
    'softnet.dropped',
    h.softnetDrops,
    `${ADVICE.softnetDropped.cause} (netdev_max_backlog = ${s['net.core.netdev_max_backlog']?.[0] ?? '?'}; ${ADVICE.softnetDropped.fix})`,
  );
  for (const [name, on, what] of [
    ['UDP_SEGMENT', h.udpSegment, 'GSO on send: one sendmsg carries up to 64 datagrams of one size'],
    ['UDP_GRO', h.udpGro, 'GRO on receive: one recvmsg returns many coalesced datagrams'],
  ] as const) {
    out.push({
      name,
      kind: 'feature',
      value: on ?? null,
      target: null,
      status: on ? 'ok' : 'info',
      explanation: `${on ? 'offered' : 'not offered'} by this kernel: ${what}`,
    });
  }
  out.push(
    h.procSysReadOnly === undefined
      ? {
          name: '/proc/sys',
          kind: 'host',
          value: null,
          target: null,
          status: 'unknown',
          explanation:
            'could not tell whether it is writable: sys/net/core/rmem_max is not under the proc root',
        }
      : {
          name: '/proc/sys',
          kind: 'host',
          value: h.procSysReadOnly ? 'read-only' : 'writable',
          target: null,
          status: 'info',
          explanation: h.procSysReadOnly
            ? 'read-only here (a container?): set the recommended values on the host or through the container runtime'
            : 'writable by root here (sockbuf never writes it; see --sysctl-conf)',
        },
  );
  return out;
}

/**
 * Whether no sysctl and no counter could be read (each is unknown or missing: an unreadable or
 * garbage proc root): the doctor then cannot say the host holds (`sockbuf doctor` exits 3).
 */
export function readNothing(findings: Finding[]): boolean {
  return !findings.some((f) => (f.kind === 'sysctl' || f.kind === 'counter') && f.value !== null);
}

/** Whether any finding is a problem (`sockbuf doctor` then exits 1). */
export function hasProblems(findings: Finding[]): boolean {
  return findings.some((f) => PROBLEMS.includes(f.status));
}

/** An /etc/sysctl.d file that sets every recommended value. Pure. */
export function sysctlConf(
  findings: Finding[],
  t: DoctorTargets,
  readOnly: boolean | undefined,
  generated: string,
): string {
  const lines = [
    '# /etc/sysctl.d/60-sockbuf.conf',
    `# ${generated}: for ${formatBitRate(t.bitsPerSecond)} at ${formatDuration(t.rttSeconds)} RTT, UDP receive ` +
      `buffer ${formatSize(t.udpRcvbufBytes)}.`,
    '# Install it and apply with: sysctl --system',
  ];
  if (readOnly) lines.push('# /proc/sys is read-only where this ran: install it on the host.');
  const rec = findings.filter((f) => f.kind === 'sysctl' && f.recommended !== undefined);
  const unknown = findings.filter((f) => f.status === 'unknown' && f.kind === 'sysctl').map((f) => f.name);
  if (unknown.length) lines.push(`# Could not be read here, so not judged: ${unknown.join(', ')}.`);
  if (!rec.length)
    lines.push(
      unknown.length
        ? '# Nothing to change among the sysctls that could be read.'
        : '# Nothing to change: every buffer sysctl holds the targets.',
    );
  for (const f of rec) {
    lines.push(`# was ${f.value}: ${f.explanation.split(';')[0]}`);
    lines.push(`${f.name} = ${f.recommended}`);
  }
  return `${lines.join('\n')}\n`;
}
