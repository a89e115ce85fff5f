// `--listen [HOST:]PORT` and `--to HOST:PORT`, IPv4 and IPv6 (`[::1]:5201`) or a host name. Pure: a
// name is kept as written and resolved when the socket is made (src/policy/resolve.ts).
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { OPTIONS, wholeNumber } from './option-registry.js';

export interface HostPort {
  host: string;
  port: number;
}

function bad(option: string, value: string, expected: string): never {
  throw UsageError.invalid(option, value, expected);
}

/** The port of `value`: 0 (any) where a socket listens, else from OPTIONS.port's min. */
function port(option: string, value: string, p: string, min = 0): number {
  const n = wholeNumber(p);
  if (!(n >= min && n <= OPTIONS.port.max)) bad(option, value, `a port from ${min} to ${OPTIONS.port.max}`);
  return n;
}

function split(option: string, value: string): { host?: string; port: string } {
  const v = value.trim();
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(v);
  if (bracket) return { host: bracket[1], port: bracket[2] };
  const i = v.lastIndexOf(':');
  if (i < 0) return { port: v };
  const host = v.slice(0, i);
  if (host.includes(':')) bad(option, value, 'an IPv6 address in brackets, such as [::1]:5201');
  return { host, port: v.slice(i + 1) };
}

/** A host name as DNS and /etc/hosts spell one: labels of letters, digits, '-' and '_', dot-separated. */
const NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_][A-Za-z0-9_-]{0,62})*\.?$/;

/** A host name (not an address): labels of letters, digits, '-' and '_'; never all digits and dots. Pure. */
export function isHostName(h: string): boolean {
  // all digits and dots is an address gone wrong (1.2.3.4.5), never a name: a top-level label has a letter
  return NAME.test(h) && !/^[\d.]+$/.test(h);
}

function host(option: string, value: string, h: string): string {
  if (!isIP(h) && !isHostName(h)) bad(option, value, 'an IPv4 or IPv6 address or a host name');
  return h;
}

/** `--listen [HOST:]PORT`; HOST defaults to 127.0.0.1. */
export function parseListen(value: string, option = 'listen', defaultHost = '127.0.0.1'): HostPort {
  const s = split(option, value);
  return {
    host: s.host === undefined ? defaultHost : host(option, value, s.host),
    port: port(option, value, s.port),
  };
}

/** `--to HOST:PORT`. */
export function parseTo(value: string, option = 'to'): HostPort {
  const s = split(option, value);
  if (s.host === undefined) bad(option, value, 'HOST:PORT, such as 127.0.0.1:5201 or [::1]:5201');
  const p = port(option, value, s.port, OPTIONS.port.min);
  return { host: host(option, value, s.host), port: p };
}

/** What kind of group address `host` is: 'broadcast' (255.255.255.255), 'multicast' (224.0.0.0/4, ff00::/8), or undefined. Pure. */
export function groupAddress(host: string): 'broadcast' | 'multicast' | undefined {
  const h = host.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  if (isIP(h) === 4) {
    if (h === '255.255.255.255') return 'broadcast';
    const first = Number(h.split('.')[0]);
    return first >= 224 && first <= 239 ? 'multicast' : undefined;
  }
  return isIP(h) === 6 && /^ff[0-9a-f]{0,2}:/.test(h) ? 'multicast' : undefined;
}

/**
 * `--to HOST:PORT` of a test end, which sends to one host: a broadcast or multicast address is refused
 * naming the option (the kernel would answer EACCES without SO_BROADCAST, and no sink joins a group).
 */
export function parseUnicastTo(value: string | HostPort, option = 'to'): HostPort {
  const hp = typeof value === 'string' ? parseTo(value, option) : value;
  const group = groupAddress(hp.host);
  if (group)
    throw UsageError.invalid(
      option,
      typeof value === 'string' ? value : formatHostPort(hp),
      `one host's address: ${hp.host} is a ${group} address, and this end sends to one receiver (it sets no SO_BROADCAST and joins no group)`,
    );
  return hp;
}

export function formatHostPort(hp: HostPort): string {
  return hp.host.includes(':') ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`;
}

/** Whether an address is a loopback one: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. Pure. */
export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && /^(?:127\.|::ffff:127\.|::1$)/i.test(address);
}
