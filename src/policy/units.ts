// One strict parser for every option's value (the units docs/library.md#units-and-durations lists). Pure: no I/O.
// Errors name the option and the value (UsageError.invalid), so the CLI can print them and exit 2.
import { UsageError } from '../errors.js';
import { shown } from './shown.js';

function fail(option: string, value: string, expected: string): never {
  throw UsageError.invalid(option, value, expected);
}

/** `value` as a string to parse, or a UsageError when a caller from plain JavaScript passed another type. */
function text(value: unknown, option: string, expected: string): string {
  if (typeof value !== 'string') fail(option, shown(value), expected);
  return value;
}

const NUM = '(\\d+(?:\\.\\d+)?|\\.\\d+)';

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

/** Bytes: `8192`, `256K` = `256KiB` = 262144, `2M`, while `2KB`/`2MB` are SI (2000, 2000000). */
export function parseSize(value: string | number, option = 'size'): number {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    fail(option, String(value), 'a size such as 8192, 256K, 2MiB or 2MB');
  }
  const m = new RegExp(`^${NUM}\\s*([a-zA-Z]*)$`).exec(
    text(value, option, 'a size such as 8192, 256K, 2MiB or 2MB').trim(),
  );
  const unit = m ? SIZE_UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) fail(option, value, 'a size such as 8192, 256K, 2MiB or 2MB');
  const n = Number(m[1]) * unit;
  if (!Number.isFinite(n) || !Number.isSafeInteger(Math.round(n))) fail(option, value, 'a size that fits');
  if (Math.round(n) !== n && Math.abs(Math.round(n) - n) > 1e-6)
    fail(option, value, 'a whole number of bytes');
  return Math.round(n);
}

/** parseSize within [min, max] (what the running code can take); `why` says where the bounds come from. */
export function parseSizeIn(value: string, option: string, min: number, max: number, why = ''): number {
  const n = parseSize(value, option);
  if (n < min || n > max)
    fail(option, value, `${formatSize(min)} to ${formatSize(max)}${why ? `: ${why}` : ''}`);
  return n;
}

const BIT_UNITS: Record<string, number> = {
  bit: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  tbit: 1e12,
  bps: 1,
  kbps: 1e3,
  mbps: 1e6,
  gbps: 1e9,
  'b/s': 8,
  'kb/s': 8e3,
  'mb/s': 8e6,
  'gb/s': 8e9,
  'kib/s': 8 * 1024,
  'mib/s': 8 * 1024 ** 2,
  'gib/s': 8 * 1024 ** 3,
};

/** Bits per second: `10gbit`, `500mbit`, `1.2GB/s` (bytes per second × 8). A bare number is bit/s. */
export function parseBitRate(value: string, option = 'bandwidth'): number {
  const m = new RegExp(`^${NUM}\\s*([a-zA-Z/]*)$`).exec(value.trim());
  if (!m) fail(option, value, 'a bit rate such as 10gbit, 500mbit or 1.2GB/s');
  const u = m[2].toLowerCase();
  const mult = u === '' ? 1 : BIT_UNITS[u];
  if (mult === undefined) fail(option, value, 'a bit rate such as 10gbit, 500mbit or 1.2GB/s');
  const n = Number(m[1]) * mult;
  if (!(n > 0) || !Number.isFinite(n)) fail(option, value, 'a positive bit rate');
  return n;
}

/** Datagrams (or messages) per second: `100k`, `100kpps`, `2.5M`, `1000`. */
export function parsePacketRate(value: string, option = 'rate'): number {
  const m = new RegExp(`^${NUM}\\s*([kKmMgG]?)(pps|/s)?$`).exec(value.trim());
  if (!m) fail(option, value, 'a datagram rate such as 1000, 100k or 100kpps');
  const mult = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2].toLowerCase()] ?? 1;
  const n = Number(m[1]) * mult;
  if (!(n > 0) || !Number.isFinite(n)) fail(option, value, 'a positive datagram rate');
  return n;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/** Seconds from `250us`, `2ms`, `1.5s`, `1m`. A bare number is refused: the unit is required. */
export function parseDuration(value: string, option = 'duration'): number {
  const m = new RegExp(`^${NUM}\\s*(ns|us|µs|ms|s|m|h)$`).exec(
    text(value, option, 'a duration such as 250us, 2ms, 1.5s or 1m').trim(),
  );
  if (!m) fail(option, value, 'a duration such as 250us, 2ms, 1.5s or 1m');
  const n = Number(m[1]) * DURATION_UNITS[m[2]];
  if (!Number.isFinite(n)) fail(option, value, 'a finite duration');
  return n;
}

/**
 * Milliseconds from a library option, as Node's own options take them: a plain number is milliseconds,
 * a string carries its unit (`'250us'`, `'2ms'`, `'1.5s'`). The CLI's flags always carry a unit.
 */
export function durationMs(value: number | string, option: string): number {
  if (typeof value !== 'number') return parseDuration(value, option) * 1000;
  if (!(Number.isFinite(value) && value >= 0))
    fail(option, String(value), 'milliseconds (a number ≥ 0) or a duration such as 2ms or 1.5s');
  return value;
}

/** parseDuration for options that must be longer than zero (--duration, --interval). */
export function parsePositiveDuration(value: string, option: string): number {
  const n = parseDuration(value, option);
  if (!(n > 0)) fail(option, value, 'more than 0');
  return n;
}

/** A fraction from `0.1%` (→ 0.001). */
export function parsePercent(value: string, option = 'loss'): number {
  const m = new RegExp(`^${NUM}\\s*%$`).exec(value.trim());
  if (!m) fail(option, value, 'a percentage such as 0%, 0.1% or 5%');
  const n = Number(m[1]) / 100;
  if (n > 1) fail(option, value, 'a percentage from 0% to 100%');
  return n;
}

/** A comma-separated list, each item parsed by `parse`. */
export function parseList<T>(value: string, option: string, parse: (v: string, o: string) => T): T[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) fail(option, value, 'a comma-separated list');
  return items.map((v) => parse(v, option));
}

// ---- formatting, the inverse for people -------------------------------------------------------

/** Bytes for people, in powers of 1024: `512 B`, `64 KiB`, `2.5 MiB`. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${Number(v.toFixed(v < 10 ? 2 : 1))} ${units[i]}`;
}

/** Bits per second for people, in powers of 1000: `940 Mbit/s`, `9.41 Gbit/s`. */
export function formatBitRate(bitsPerSecond: number): string {
  const units = ['bit/s', 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s'];
  let v = bitsPerSecond;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${Number(v.toFixed(v < 10 ? 2 : 1))} ${units[i]}`;
}

/** Seconds for people: `1.5 s`, `2 ms`, `250 µs`. */
export function formatDuration(seconds: number): string {
  if (seconds >= 1) return `${Number(seconds.toFixed(2))} s`;
  if (seconds >= 1e-3) return `${Number((seconds * 1e3).toFixed(2))} ms`;
  return `${Number((seconds * 1e6).toFixed(1))} µs`;
}
