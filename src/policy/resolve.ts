// Host names, resolved when a socket is made (parseTo/parseListen only parse): dns.lookup with every
// address, as Node's net.connect does, and a connect that tries each address in turn.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ResolveError, UsageError } from '../errors.js';

/** The option that carried a host name, as a program writes it (`to`), and its whole value (`host:port`). */
export interface ResolveWhere {
  option: string;
  value?: string;
}

/**
 * Every address of `host` in the resolver's order (an IP address is its own); ResolveError if none,
 * naming `where`, the option that carried the name.
 */
export async function resolveHost(host: string, where?: ResolveWhere): Promise<string[]> {
  if (isIP(host)) return [host];
  let found: { address: string }[];
  try {
    found = await lookup(host, { all: true });
  } catch (e) {
    throw new ResolveError(host, (e as NodeJS.ErrnoException).code ?? 'ENOTFOUND', where);
  }
  if (found.length === 0) throw new ResolveError(host, 'ENOTFOUND', where);
  return [...new Set(found.map((a) => a.address))];
}

/** The first address of `host`: where a listener binds (as net.Server#listen does with a name). */
export async function resolveFirst(host: string, where?: ResolveWhere): Promise<string> {
  return (await resolveHost(host, where))[0];
}

/** How long each address but the last may take to connect before the next is tried (Node's default). */
export const ATTEMPT_SECONDS = 0.25;

/**
 * Calls `attempt` for each address in turn until one succeeds (net.connect's autoSelectFamily, one
 * attempt at a time): every address but the last gets `ATTEMPT_SECONDS`, the last the caller's
 * timeout. Rejects with the first address's error when all fail (a UsageError at once).
 */
export async function tryEach<T>(
  addresses: string[],
  attempt: (address: string, timeoutSeconds: number | undefined) => Promise<T>,
  timeoutSeconds?: number,
): Promise<T> {
  let first: unknown;
  for (let i = 0; i < addresses.length; i++) {
    const last = i === addresses.length - 1;
    const t = last ? timeoutSeconds : Math.min(ATTEMPT_SECONDS, timeoutSeconds ?? ATTEMPT_SECONDS);
    try {
      return await attempt(addresses[i], t);
    } catch (e) {
      if (e instanceof UsageError) throw e; // the same for every address
      first ??= e;
    }
  }
  throw first;
}
