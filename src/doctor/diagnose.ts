// The doctor as a program calls it: `const d = await diagnose({ bandwidth: '10gbit', rtt: '2ms' })`.
// Reads the host, judges it against the targets, and says it three ways: the table `sockbuf doctor`
// prints (d.text()), the sockbuf.v1 document of `--json` (d.document()) and an /etc/sysctl.d file
// (d.sysctlConf()). Never writes a sysctl.

import { UsageError } from '../errors.js';
import { type HostInfo, hostInfo } from '../observe/proc.js';
import { checkOption, OPTIONS } from '../policy/option-registry.js';
import { formatTable } from '../policy/table.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { SCHEMA, VERSION } from '../sys/package.js';
import { type CheckHostOptions, checkHost, type HostCheck } from './check.js';
import { type DoctorTargets, type Finding, hasProblems, PROBLEMS, readNothing, sysctlConf } from './rules.js';
import { formatSocketFindings, type SocketFinding, socketFindings } from './sockets.js';

/** What diagnose takes: the bandwidth and RTT to size the buffers for, and the host to read. */
export interface DiagnoseOptions {
  /** The link rate one stream should reach: bits per second, or a rate such as '10gbit' (default). */
  bandwidth?: number | string;
  /** The round-trip time to plan for: milliseconds, or a duration such as '2ms' (default). */
  rtt?: number | string;
  /** The UDP receive buffer wanted, as getsockopt reports it: bytes, or a size such as '8M' (default). */
  udpRcvbuf?: number | string;
  /** The /proc tree to read (default $SOCKBUF_PROC_ROOT or /proc). */
  procRoot?: string;
  /** Count drops over this window (ms, or '5s') instead of since the last run. */
  sample?: number | string;
  /** false: no history (counters since boot); a path: that history file. Default: one per proc root. */
  history?: CheckHostOptions['history'];
  /**
   * List this host's pinned sockets carrying load and stalled readers (two sock_diag samples 0.5 s
   * apart). Default: true unless a proc root is given (a copied /proc tree has no live sockets).
   */
  sockets?: boolean;
}

/** A diagnosis as a sockbuf.v1 results document: what `sockbuf doctor --json` prints. */
export interface DoctorDocument {
  schema: typeof SCHEMA;
  /** The sockbuf version that wrote it. */
  version: string;
  command: 'doctor';
  /** The targets checked against, and the /proc tree read. */
  params: DoctorTargets & { procRoot: string };
  /** The kernel, the CPUs and the sysctls of the host read. */
  host: HostInfo;
  /** One row per finding, each marked as the doctor's. */
  results: (Finding & { scenario: 'doctor' })[];
  /** The pinned sockets carrying load and stalled readers, when they were looked at. */
  sockets?: SocketFinding[];
}

/** What diagnose resolves with: the findings, whether one is a problem, the sysctl.d file that would fix them. */
export interface Diagnosis extends HostCheck {
  targets: DoctorTargets;
  /** Whether a finding is a problem (`sockbuf doctor` then exits 1). */
  problems: boolean;
  /**
   * Whether no sysctl and no counter could be read (an unreadable or garbage proc root): nothing holds
   * or fails, and `sockbuf doctor` exits 3.
   */
  readNothing: boolean;
  /** The table and explanations `sockbuf doctor` prints. */
  text(): string;
  /** The sockbuf.v1 document `sockbuf doctor --json` prints (docs/results-schema.json). */
  document(): DoctorDocument;
  /** An /etc/sysctl.d file that sets every recommended value. */
  sysctlConf(): string;
  /** The sockets section's findings (information: they do not change the exit code); undefined when not looked at. */
  sockets?: SocketFinding[];
}

/** The targets from the options, each checked (UsageError naming the option and the value). */
export function doctorTargets(
  o: Pick<DiagnoseOptions, 'bandwidth' | 'rtt' | 'udpRcvbuf'> = {},
): DoctorTargets {
  return {
    bitsPerSecond: checkOption('bandwidth', o.bandwidth ?? OPTIONS.bandwidth.default),
    rttSeconds: checkOption('rtt', o.rtt ?? OPTIONS.rtt.default) / 1000,
    udpRcvbufBytes: checkOption('udpRcvbuf', o.udpRcvbuf ?? OPTIONS.udpRcvbuf.default),
  };
}

/** Checks the host against the targets. UsageError naming procRoot when it is not a /proc tree. */
export async function diagnose(o: DiagnoseOptions = {}): Promise<Diagnosis> {
  const targets = doctorTargets(o);
  if (o.procRoot === '') throw UsageError.invalid('procRoot', ``, 'a folder');
  const check = await checkHost({ targets, procRoot: o.procRoot, sample: o.sample, history: o.history });
  const { findings, procRoot, host } = check;
  const look = o.sockets ?? (o.procRoot === undefined && !process.env.SOCKBUF_PROC_ROOT);
  const sockets = look ? await socketFindings().catch(() => undefined) : undefined;
  return {
    ...check,
    targets,
    sockets,
    problems: hasProblems(findings),
    readNothing: readNothing(findings),
    text: () =>
      formatFindings(findings, targets, host.procSysReadOnly, procRoot) +
      (sockets ? `\n${formatSocketFindings(sockets).join('\n')}\n` : ''),
    document: () => ({
      schema: SCHEMA,
      version: VERSION,
      command: 'doctor',
      params: { ...targets, procRoot },
      host: hostInfo(procRoot),
      // scenario: 'doctor' makes each row a row of the sockbuf.v1 schema
      results: findings.map((f) => ({ scenario: 'doctor' as const, ...f })),
      ...(sockets ? { sockets } : {}),
    }),
    sysctlConf: () =>
      sysctlConf(
        findings,
        targets,
        host.procSysReadOnly,
        `written by sockbuf ${VERSION} doctor on ${new Date().toISOString()}`,
      ),
  };
}

const show = (v: Finding['value'] | Finding['target']) => (v === null ? '-' : String(v));

/** The value column: udp_mem in pages and bytes, a counter with what it grew by. */
function shown(f: Finding): [string, string] {
  if (f.valueBytes && f.targetBytes !== undefined)
    return [
      `${f.value} pages = ${f.valueBytes.map((b) => formatSize(b)).join(' ')}`,
      `${f.target} pages = ${formatSize(f.targetBytes)}`,
    ];
  if (f.grew !== undefined && f.since !== 'boot') return [`${f.value} (+${f.grew})`, show(f.target)];
  return [show(f.value), show(f.target)];
}

/** The findings as `sockbuf doctor` prints them: a table, then what each problem means and its fix. */
export function formatFindings(
  findings: Finding[],
  t: DoctorTargets,
  readOnly: boolean | undefined,
  procRoot = '/proc',
): string {
  const rows = findings.map((f) => [f.name, ...shown(f), f.status]);
  const out = [
    `sockbuf doctor: ${formatBitRate(t.bitsPerSecond)} at ${formatDuration(t.rttSeconds)} RTT, UDP receive ` +
      `buffer ${formatSize(t.udpRcvbufBytes)}`,
    '',
    formatTable(
      ['check', { title: 'value', align: 'left' }, { title: 'target', align: 'left' }, 'status'],
      rows,
    ),
    '',
  ];
  for (const f of findings) {
    if (f.status === 'ok' || f.status === 'missing') continue;
    const mark = PROBLEMS.includes(f.status) ? '!' : f.status === 'unknown' ? '?' : '·';
    out.push(`${mark} ${f.name}: ${f.explanation}`);
    if (f.recommended !== undefined) {
      out.push(
        `    recommended${readOnly ? ' (on the host: /proc/sys is read-only here)' : ''}: ` +
          `sysctl -w ${f.name}=${f.recommended.includes(' ') ? `"${f.recommended}"` : f.recommended}`,
      );
    }
  }
  const n = findings.filter((f) => PROBLEMS.includes(f.status)).length;
  const u = findings.filter((f) => f.status === 'unknown').length;
  const unknown = u ? ` ${u} check${u > 1 ? 's' : ''} could not be read (unknown).` : '';
  out.push(
    readNothing(findings)
      ? `Nothing could be read under ${procRoot}: no check holds or fails (${u} unknown, the rest missing).`
      : n === 0
        ? u
          ? `The checks that could be read hold;${unknown}`
          : 'All checks hold.'
        : `${n} finding${n > 1 ? 's' : ''}.${unknown} sockbuf never writes a sysctl; --sysctl-conf prints an /etc/sysctl.d file.`,
  );
  return `${out.join('\n')}\n`;
}
