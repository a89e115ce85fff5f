// Whom the exporter's /probe may test: `--probe-allow LIST`, host names, addresses and CIDR ranges,
// IPv4 and IPv6, comma-separated. A target is allowed when every address its name resolves to is in
// the list (an address of an allowed name counts as in it); the probe then connects to the address that
// was checked and never resolves the name again, so a DNS answer that changes between the check and
// the connect (rebinding) cannot send it anywhere else. IPv4-mapped IPv6 addresses (::ffff:10.0.0.1)
// match their IPv4 entries and the other way round (net.BlockList).
import { BlockList, isIP } from 'node:net';
import { UsageError } from '../errors.js';
import { isHostName } from '../policy/address.js';
import { resolveHost } from '../policy/resolve.js';

export interface ProbeAllowList {
  /** The addresses and ranges of the list. */
  readonly nets: BlockList;
  /** The host names of the list, resolved at each check. */
  readonly names: readonly string[];
  /** The list as given, for messages. */
  readonly text: string;
}

const EXPECTED = 'host names, addresses or CIDR ranges such as 10.0.0.0/8 or fd00::/8, comma-separated';

/** `[::1]` → `::1`: an address may be written in brackets, as in HOST:PORT. */
const unbracket = (s: string) => (s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s);

/** Parses the list; UsageError naming `option` for an entry that is none of the three. Pure. */
export function parseProbeAllow(value: string | readonly string[], option = 'probeAllow'): ProbeAllowList {
  const entries = (typeof value === 'string' ? value.split(',') : value).map((e) => e.trim());
  const text = entries.join(',');
  const bad = (entry: string, why = EXPECTED): never => {
    throw UsageError.invalid(option, entry.slice(0, 100), why);
  };
  if (entries.length === 0 || entries.every((e) => e === '')) bad(text);
  const nets = new BlockList();
  const names: string[] = [];
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const host = unbracket(slash < 0 ? entry : entry.slice(0, slash));
    const family = isIP(host);
    if (slash >= 0) {
      const bits = entry.slice(slash + 1);
      const max = family === 6 ? 128 : 32;
      if (!family || !/^\d{1,3}$/.test(bits) || Number(bits) > max)
        bad(entry, `a CIDR range such as 10.0.0.0/8 or fd00::/8 (prefix 0 to ${family === 6 ? 128 : 32})`);
      nets.addSubnet(host, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
    } else if (family) nets.addAddress(host, family === 6 ? 'ipv6' : 'ipv4');
    else if (isHostName(entry)) names.push(entry.toLowerCase().replace(/\.$/, ''));
    else bad(entry);
  }
  return { nets, names, text };
}

export type AllowVerdict =
  | { allowed: true; address: string; addresses: string[] }
  | { allowed: false; reason: string };

/** Whether `address` (an IP address) is in the list's addresses and ranges. Pure. */
export function inNets(list: ProbeAllowList, address: string): boolean {
  return list.nets.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The verdict on `host`, given what it resolved to and the addresses of the list's names: allowed only
 * when every address is in the list; `address`, the one to connect to, is the first (as net.connect
 * tries them). Pure.
 */
export function judgeTarget(
  list: ProbeAllowList,
  host: string,
  addresses: readonly string[],
  named: readonly string[] = [],
): AllowVerdict {
  const byName = new BlockList();
  for (const a of named) byName.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  const outside = addresses.filter(
    (a) => !inNets(list, a) && !byName.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4'),
  );
  if (addresses.length === 0) return { allowed: false, reason: `${host} has no address` };
  if (outside.length > 0) {
    const which = isIP(host)
      ? `${host} is`
      : `${host} resolves to ${outside.join(', ')}, which ${outside.length > 1 ? 'are' : 'is'}`;
    // the list itself is not told: it maps the network for whoever asks
    return { allowed: false, reason: `${which} not in the allow-list` };
  }
  return { allowed: true, address: addresses[0], addresses: [...addresses] };
}

/**
 * Resolves `host` (an address is its own) and, when some address is not in the list's addresses and
 * ranges, the list's names too; then judgeTarget. A name that does not resolve is refused with the
 * resolver's code; a listed name that does not resolve allows nothing.
 */
export async function checkTarget(list: ProbeAllowList, host: string): Promise<AllowVerdict> {
  let addresses: string[];
  try {
    addresses = await resolveHost(host);
  } catch (err) {
    return {
      allowed: false,
      reason: `${host} does not resolve (${(err as { code?: string }).code ?? 'ENOTFOUND'})`,
    };
  }
  const named =
    list.names.length > 0 && addresses.some((a) => !inNets(list, a))
      ? (await Promise.all(list.names.map((n) => resolveHost(n).catch(() => [] as string[])))).flat()
      : [];
  return judgeTarget(list, host, addresses, named);
}

/**
 * The entry of the list that lets every IPv4 or IPv6 address through (0.0.0.0/0, ::/0, or ranges
 * that add up to that), or undefined. Pure.
 */
export function coversEverything(list: ProbeAllowList): string | undefined {
  // the first and last address of each half of each family: every one in means a /0 (or /1 + /1)
  const v4 = ['0.0.0.1', '127.255.255.254', '128.0.0.1', '255.255.255.254'];
  const v6 = [
    '::2',
    '7fff:ffff:ffff:ffff:ffff:ffff:ffff:fffe',
    '8000::1',
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe',
  ];
  if (v4.every((a) => list.nets.check(a, 'ipv4'))) return '0.0.0.0/0';
  if (v6.every((a) => list.nets.check(a, 'ipv6'))) return '::/0';
  return undefined;
}
