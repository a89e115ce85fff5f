// Readers for /proc: sysctls, /proc/net/snmp, netstat, snmp6, softnet_stat, sockstat(6), and the
// host summary every results document carries. The /proc root can be pointed elsewhere (tests, or
// SOCKBUF_PROC_ROOT) so that rules can be checked against a fake host.
import { availableParallelism, release } from 'node:os';
import { join } from 'node:path';
import { InputLimitError, readBoundedText } from '../sys/bounded-read.js';
import { SockbufError } from '../sys/sockbuf-error.js';
import { BUFFER_SYSCTLS, procRoot, readSysctlText } from '../sys/sysctl.js';

export { procRoot, readSysctl } from '../sys/sysctl.js';

/** Every BUFFER_SYSCTLS value as text, for results documents. */
export function readBufferSysctls(root?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of BUFFER_SYSCTLS) {
    const v = readSysctlText(n, root);
    if (v !== undefined) out[n] = v.replace(/\s+/g, ' ');
  }
  return out;
}

/**
 * A counter as the kernel prints it: a whole decimal number a double holds exactly. Anything else (a
 * proc root that is not the kernel's: garbage, a sign, 400 digits) is no counter, so it is left out
 * rather than read as NaN or Infinity.
 */
function counter(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,16}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A hex counter of softnet_stat (at most 16 hex digits, a safe integer), else 0. */
function hexCounter(text: string | undefined): number {
  if (text === undefined || !/^[0-9a-fA-F]{1,16}$/.test(text)) return 0;
  const n = Number.parseInt(text, 16);
  return Number.isSafeInteger(n) ? n : 0;
}

/**
 * /proc/net/snmp or /proc/net/netstat: pairs of header/value lines per protocol, parsed into
 * { Udp: { RcvbufErrors: n, … }, TcpExt: { … } }. Pure on its text argument.
 */
export function parseSnmp(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  const lines = text.split('\n').filter(Boolean);
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const [proto, ...keys] = lines[i].split(/\s+/);
    const [proto2, ...vals] = lines[i + 1].split(/\s+/);
    if (proto !== proto2) continue;
    const name = proto.replace(/:$/, '');
    out[name] = {};
    keys.forEach((k, j) => {
      const v = counter(vals[j]);
      if (v !== undefined) out[name][k] = v;
    });
  }
  return out;
}

/** snmp, netstat and snmp6 parsed into one view. Throws when one cannot be read (readNet). */
export function readSnmp(root?: string): Record<string, Record<string, number>> {
  const read = (f: string) => readNet(f, root);
  return { ...parseSnmp(read('snmp')), ...parseSnmp(read('netstat')), ...parseSnmp6(read('snmp6')) };
}

/** readSnmp, or {} where /proc/net cannot be read: for counters a command reports beside its own. */
export function readSnmpOrEmpty(root?: string): Record<string, Record<string, number>> {
  try {
    return readSnmp(root);
  } catch {
    return {};
  }
}

/**
 * /proc/net/snmp6: one `Udp6InDatagrams  12` per line, parsed into { Udp6: { InDatagrams: 12 }, … }
 * (the protocol is the leading letters and digit, as node_exporter splits it). Pure.
 */
export function parseSnmp6(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const line of text.split('\n')) {
    const m = /^(Ip6|Icmp6|Udp6|UdpLite6)(\w+)\s+(\d+)/.exec(line.trim());
    if (!m) continue;
    const v = counter(m[3]);
    if (v === undefined) continue;
    out[m[1]] ??= {};
    out[m[1]][m[2]] = v;
  }
  return out;
}

/** Per-CPU backlog drops: the second column of /proc/net/softnet_stat (hex), summed. */
export function parseSoftnetDrops(text: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length > 1) sum += hexCounter(cols[1]);
  }
  return sum;
}

/**
 * Per-CPU backlog drops summed, or undefined when softnet_stat has no CPU's line (a line whose first
 * two columns are hex counters): garbage is not zero drops. Pure.
 */
export function softnetDropsOf(text: string): number | undefined {
  const counted = text.split('\n').some((l) => /^[0-9a-fA-F]{1,16}\s+[0-9a-fA-F]{1,16}(\s|$)/.test(l.trim()));
  return counted ? parseSoftnetDrops(text) : undefined;
}

export interface SoftnetRow {
  /** The CPU's number: the 13th column where the kernel prints it, else the line's (as node_exporter). */
  cpu: number;
  processed: number;
  dropped: number;
  timeSqueezed: number;
}

/** /proc/net/softnet_stat, one row per CPU (hex columns). Pure. */
export function parseSoftnet(text: string): SoftnetRow[] {
  const rows: SoftnetRow[] = [];
  for (const line of text.split('\n')) {
    const c = line.trim().split(/\s+/);
    if (c.length < 3) continue;
    const hex = (i: number) => hexCounter(c[i]);
    rows.push({
      cpu: c.length >= 13 ? hex(12) : rows.length,
      processed: hex(0),
      dropped: hex(1),
      timeSqueezed: hex(2),
    });
  }
  return rows;
}

/**
 * /proc/net/sockstat and sockstat6: `TCP: inuse 3 orphan 0 tw 13 alloc 4 mem 413` parsed into
 * { TCP: { inuse: 3, … }, sockets: { used: 42 } }. Pure.
 */
export function parseSockstat(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    const kv = m[2].split(/\s+/);
    out[m[1]] = {};
    for (let i = 0; i + 1 < kv.length; i += 2) {
      const v = counter(kv[i + 1]);
      if (v !== undefined) out[m[1]][kv[i]] = v;
    }
  }
  return out;
}

/**
 * The most a /proc/net file may hold here: 1 MiB (snmp and netstat are a few KiB; softnet_stat is a
 * line of ~120 bytes per CPU). A proc root that is not the kernel's is read no further.
 */
export const MAX_PROC_NET_BYTES = 1 << 20;

/** Files a kernel without IPv6 lacks: absent, they read as empty. */
const OPTIONAL = new Set(['snmp6', 'sockstat6']);

/**
 * <root>/net/FILE, bounded (MAX_PROC_NET_BYTES). Throws when it cannot be read, with the path in the
 * message (EACCES, ENOENT where /proc/PID/net is hidden, InputLimitError): the exporter's collector
 * then reports its failure, and the doctor its checks as unknown.
 */
export function readNet(file: string, root?: string): string {
  const path = join(procRoot(root), 'net', file);
  try {
    return readBoundedText(path, MAX_PROC_NET_BYTES, path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && OPTIONAL.has(file)) return '';
    if (err instanceof InputLimitError) throw err;
    throw new SockbufError(`cannot read ${path}: ${code ?? (err as Error).message}`, code ?? 'EIO', {
      cause: err,
    });
  }
}

export function readSoftnet(root?: string): SoftnetRow[] {
  return parseSoftnet(readNet('softnet_stat', root));
}

export function readSockstat(root?: string): Record<string, Record<string, number>> {
  return { ...parseSockstat(readNet('sockstat', root)), ...parseSockstat(readNet('sockstat6', root)) };
}

export interface HostInfo {
  kernel: string;
  cpus: number;
  sysctls: Record<string, string>;
}

/** `host` of every results document: the kernel and the buffer sysctls. */
export function hostInfo(root?: string): HostInfo {
  return {
    kernel: readSysctlText('kernel.osrelease', root) ?? release(),
    cpus: availableParallelism(),
    sysctls: readBufferSysctls(root),
  };
}
