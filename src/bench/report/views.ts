// Result columns: which columns of a scenario's rows people see, in which order, with which unit, and
// the figures (rates, drops, latencies) the seeds read from a row. tables.ts lays them out. Pure.
import { cvOf } from '../column-stats.js';
import { clip, MAX_COLUMNS } from './bounds.js';
import { firstNum, num, param, pathOf, type ResultRow } from './results.js';

export interface Column {
  label: string;
  /** The cell: a parameter as text, or a number formatted by `format`. */
  get: (row: ResultRow) => string | number | undefined;
  format?: (v: number) => string;
}

/** Numbers for people: thousands separated, 3 significant digits below 100. */
export function fmtNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v === 0 ? '0' : v.toPrecision(2);
}

const pct = (v: number) => `${v < 10 && v !== 0 ? v.toFixed(2) : v.toFixed(1)} %`;
const times = (v: number) => `${v.toFixed(2)} ×`;

// Aliases: the column names a scenario may use for the same figure (kept short on purpose).
export const BYTES_PER_SECOND = ['bytesPerSecond', 'receivedBytesPerSecond'];
export const DATAGRAMS_PER_SECOND = ['datagramsPerSecond', 'receivedPerSecond', 'packetsPerSecond'];

export const gbPerSecond = (r: ResultRow) => {
  const b = firstNum(r, BYTES_PER_SECOND);
  return b === undefined ? undefined : b / 1e9;
};
export const mibPerSecond = (r: ResultRow) => {
  const b = firstNum(r, BYTES_PER_SECOND);
  return b === undefined ? num(r, 'mibPerSecond') : b / 2 ** 20;
};

/** The rate a UDP row was asked to send: a number, or undefined for 'max'. */
export function askedRate(r: ResultRow): number | undefined {
  return firstNum(r, ['rate', 'ratePerSecond', 'targetRatePerSecond']);
}
/** What the sender really sent per second. */
export function sentRate(r: ResultRow): number | undefined {
  return firstNum(r, ['sentPerSecond', 'achievedRatePerSecond', 'sendRatePerSecond']) ?? askedRate(r);
}
export function droppedPct(r: ResultRow): number | undefined {
  const p = firstNum(r, ['droppedPct', 'lossPct', 'lostPct']);
  if (p !== undefined) return p;
  const sent = num(r, 'sent');
  const received = num(r, 'received');
  return sent && received !== undefined ? (100 * (sent - received)) / sent : undefined;
}
export function latencyUs(r: ResultRow, p: 'p50' | 'p99' | 'p999'): number | undefined {
  return firstNum(r, [`${p}Us`, `latency${p[0].toUpperCase()}${p.slice(1)}Us`, `rtt${p.toUpperCase()}Us`]);
}
/**
 * A UDP row's kernel drops in datagrams, the unit of its `dropped`: the counter itself without GRO; with
 * GRO the counter counts coalesced messages (one may hold 64 datagrams), so the datagrams come from the
 * sequence numbers: lost, less what userspace dropped and truncated. Then dropped = kernel + userspace +
 * truncated holds in both cases.
 */
export function kernelDroppedDatagrams(r: ResultRow): number | undefined {
  if (r.kernelDropsUnit !== 'gro-messages') return num(r, 'kernelDrops');
  const lost = num(r, 'lost');
  if (lost === undefined) return undefined;
  return Math.max(0, lost - (num(r, 'userspaceDrops') ?? 0) - (num(r, 'truncated') ?? 0));
}
/** With GRO: the kernel's drop counter, in GRO messages (a unit of its own, shown apart). */
const kernelDroppedGroMessages = (r: ResultRow) =>
  r.kernelDropsUnit === 'gro-messages' ? num(r, 'kernelDrops') : undefined;

export const isPinned = (policy: string | undefined) => policy !== undefined && policy !== 'auto';

/**
 * The coefficient of variation of a figure over a point's runs (sample standard deviation ÷ mean, in %),
 * as seed 000's sysctl table gives it; undefined for a point measured once.
 */
export function cvPct(row: ResultRow, keys: string[]): number | undefined {
  for (const k of keys) {
    const values = (row[k] as { values?: unknown } | undefined)?.values;
    if (!Array.isArray(values)) continue;
    return cvOf(values);
  }
  return undefined;
}
const cvCol = (keys: string[]): Column =>
  c(
    'CV',
    (r) => cvPct(r, keys),
    (v) => `${v.toFixed(1)} %`,
  );

/** A row's write water mark: undefined when the run had no `--write-hwms`, 'default' when not set. */
export const hwmOf = (r: ResultRow) => param(r, 'hwm');
const hwmSet = (r: ResultRow) => (hwmOf(r) ?? 'default') !== 'default';

/**
 * Seed 001's variants (RocketMQ's remoting ping): A neither SO_SNDBUF/SO_RCVBUF nor a write water mark
 * set, B the buffers pinned (4.9.2), C both, D the water mark only. Undefined for a row of a run
 * without `--write-hwms`.
 */
export function variantOf(r: ResultRow): 'A' | 'B' | 'C' | 'D' | undefined {
  if (hwmOf(r) === undefined) return undefined;
  const pinned = isPinned(param(r, 'policy'));
  return hwmSet(r) ? (pinned ? 'C' : 'D') : pinned ? 'B' : 'A';
}

function label(key: string): string {
  return key.replace(/([A-Z])/g, ' $1').toLowerCase();
}

/**
 * Generic columns for a scenario no view knows: every key that has a value (the first MAX_COLUMNS of
 * them; `left` counts the others), numbers formatted by their unit suffix.
 */
export function genericColumns(rows: ResultRow[]): Column[] & { left?: number } {
  const keys = new Set<string>();
  for (const r of rows)
    for (const k of Object.keys(r))
      if (!keys.has(k) && k !== 'scenario' && k !== 'file' && (param(r, k) ?? num(r, k)) !== undefined)
        keys.add(k);
  const columns: Column[] & { left?: number } = [...keys].slice(0, MAX_COLUMNS).map((k) => ({
    label: clip(label(k)),
    get: (r: ResultRow) => num(r, k) ?? param(r, k),
    format: k.endsWith('Pct') ? pct : fmtNumber,
  }));
  if (keys.size > MAX_COLUMNS) columns.left = keys.size - MAX_COLUMNS;
  return columns;
}

/** A boolean column (whether GRO/GSO was on) as on/off. */
const onOff = (lbl: string, key: string): Column => ({
  label: lbl,
  get: (r) => (typeof r[key] === 'boolean' ? (r[key] ? 'on' : 'off') : undefined),
});

const c = (lbl: string, get: Column['get'], format: Column['format'] = fmtNumber): Column => ({
  label: lbl,
  get,
  format,
});
const p = (lbl: string, key: string): Column => c(lbl, (r) => param(r, key));
const n = (lbl: string, keys: string[], format?: Column['format']): Column =>
  c(lbl, (r) => firstNum(r, keys), format);

/**
 * Δ of a tcp/ping row against the auto row of the same size (in flight, water mark) in the same file,
 * in %. The auto rows are indexed once: a table of 200 000 rows makes one pass, not one search per row.
 */
function deltaVsAuto(rows: ResultRow[], get: (r: ResultRow) => number | undefined) {
  const key = (r: ResultRow) =>
    JSON.stringify(['size', 'inflight', 'hwm', 'file'].map((k) => param(r, k) ?? null));
  let autos: Map<string, ResultRow> | undefined;
  return (r: ResultRow) => {
    if (!autos) {
      autos = new Map();
      for (const b of rows) if (param(b, 'policy') === 'auto' && !autos.has(key(b))) autos.set(key(b), b);
    }
    const base = autos.get(key(r));
    const a = base && get(base);
    const v = get(r);
    return a && v !== undefined && param(r, 'policy') !== 'auto' ? (100 * (v - a)) / a : undefined;
  };
}
const signedPct = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} %`;

/** The columns of each scenario the report knows (and of find-max rows, `udp-max`). */
export const VIEWS: Record<string, { title: string; columns: (rows: ResultRow[]) => Column[] }> = {
  tcp: {
    title: 'TCP bulk: throughput per buffer policy × message size',
    columns: (rows) => [
      p('policy', 'policy'),
      p('size B', 'size'),
      p('write hwm', 'hwm'),
      c('MiB/s', mibPerSecond),
      cvCol(BYTES_PER_SECOND),
      c('Δ vs auto', deltaVsAuto(rows, mibPerSecond), signedPct),
      n('msgs/s', ['messagesPerSecond']),
      n('rwnd-limited', ['rwndLimitedPct'], pct),
      n('sndbuf-limited', ['sndbufLimitedPct'], pct),
      n('cwnd', ['cwndSegments', 'cwnd']),
      n('rtt µs', ['rttUs']),
      c('wscale', (r) => param(r, 'wscale') ?? param(r, 'wscales')),
    ],
  },
  ping: {
    title: 'Framed request/response: round trips and latency per policy × size',
    columns: (rows) => [
      p('policy', 'policy'),
      p('size B', 'size'),
      p('in flight', 'inflight'),
      p('write hwm', 'hwm'),
      c('variant', variantOf),
      n('round trips/s', ['roundTripsPerSecond', 'requestsPerSecond']),
      cvCol(['roundTripsPerSecond', 'requestsPerSecond']),
      c(
        'Δ vs auto',
        deltaVsAuto(rows, (r) => firstNum(r, ['roundTripsPerSecond', 'requestsPerSecond'])),
        signedPct,
      ),
      c('p50 µs', (r) => latencyUs(r, 'p50')),
      c('p99 µs', (r) => latencyUs(r, 'p99')),
      c('p99.9 µs', (r) => latencyUs(r, 'p999')),
    ],
  },
  drain: {
    title: 'Bulk drain: GB/s per read buffer',
    columns: (rows) => {
      const base = rows.find((r) => param(r, 'reader') === 'data');
      const b = base && gbPerSecond(base);
      return [
        p('reader', 'reader'),
        c('GB/s', gbPerSecond, (v) => v.toFixed(2)),
        cvCol(BYTES_PER_SECOND),
        c('× data', (r) => (b ? (gbPerSecond(r) ?? Number.NaN) / b : undefined), times),
        // the reader's own cost, and whether the sender set the rate (bench drain's columns)
        n('rx CPU ns/B', ['receiverCpuNsPerByte'], (v) => v.toFixed(2)),
        n('sender busy', ['senderBusy'], (v) => `${Math.round(v * 100)} %`),
        n('reads', ['reads']),
        n('mean read B', ['meanReadBytes', 'readBytesMean', 'meanReadSize']),
      ];
    },
  },
  udp: {
    title:
      'UDP loss ladder per receive path × rate, in datagrams: dropped = kernel + userspace + truncated (GRO rows: kernel from the sequence numbers)',
    columns: () => [
      c('path', pathOf),
      c('rate /s', (r) => param(r, 'rate')),
      n('sent', ['sent']),
      n('received', ['received']),
      n('dropped', ['dropped']),
      c('% dropped', droppedPct, pct),
      c('kernel', kernelDroppedDatagrams),
      n('userspace', ['userspaceDrops']),
      n('truncated', ['truncated']),
      c('kernel GRO msgs', kernelDroppedGroMessages),
      n('tail lost', ['tailLost']),
      n('drift s', ['driftSeconds'], (v) => v.toFixed(3)),
      n('sent/s', ['sentPerSecond']),
      n('pkts/batch', ['packetsPerBatch']),
      n('JS calls/dgram', ['jsCallsPerDatagram']),
      onOff('GSO', 'gso'),
      onOff('GRO', 'gro'),
    ],
  },
  'udp-max': {
    title: 'UDP: highest loss-free rate per receive path (find-max)',
    columns: () => [
      c('path', pathOf),
      n('loss-free /s', ['maxLossFreeRate']),
      c('kept up with sender', (r) =>
        typeof r.keptUpWithSender === 'boolean' ? (r.keptUpWithSender ? 'yes' : 'no') : undefined,
      ),
      n('sender max /s', ['senderMaxRate']),
      n('% dropped at max', ['droppedPctAtMax'], pct),
      n('trials', ['trials']),
      n('JS calls/dgram', ['jsCallsPerDatagram']),
      n('tolerance', ['tolerancePct'], pct),
      onOff('GSO', 'gso'),
      onOff('GRO', 'gro'),
    ],
  },
  streamer: {
    title: 'Streamer: datagrams/s and packets per batch per receive path × sockets',
    columns: () => [
      c('path', pathOf),
      p('sockets', 'sockets'),
      p('rate /s', 'rate'),
      n('datagrams/s', DATAGRAMS_PER_SECOND),
      n('pkts/batch', ['packetsPerBatch']),
      n('CPU µs/dgram', ['cpuUsPerDatagram']),
      n('JS calls/dgram', ['jsCallsPerDatagram']),
      n('% dropped', ['droppedPct'], pct),
      onOff('GSO', 'gso'),
      onOff('GRO', 'gro'),
    ],
  },
  'sysctl-sweep': {
    title: 'rmem_max/wmem_max sweep across the lab (receiver asks for 2041500 B)',
    columns: () => [n('rmem_max B', ['rmemMax', 'value']), c('MiB/s', mibPerSecond), cvCol(BYTES_PER_SECOND)],
  },
};

/** A cell as text (a string from the results file cut at MAX_TEXT characters). */
export function cell(col: Column, row: ResultRow): string {
  const v = col.get(row);
  if (v === undefined) return '';
  if (typeof v === 'number') return Number.isNaN(v) ? '' : (col.format ?? fmtNumber)(v);
  return clip(v);
}
