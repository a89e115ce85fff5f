// `sockbuf inspect` as a library: dump every TCP and UDP socket of the host (IPv4 and IPv6) through
// NETLINK_SOCK_DIAG, as ss does, add the owning processes, and judge them (analyze.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError, SysError, UsageError } from '../errors.js';
import { checkOption } from '../policy/option-registry.js';
import { IPPROTO_TCP, IPPROTO_UDP, NETLINK_SOCK_DIAG, TCP_STATES } from '../sys/constants.js';
import { netlinkDump } from '../sys/netlink.js';
import {
  analyze,
  filterRows,
  type HostLimits,
  type InspectedSocket,
  type Snapshot,
  type SocketFilter,
} from './analyze.js';
import { FlagMemory } from './flag-memory.js';
import { socketOwners } from './owners.js';
import { readSysctl } from './proc.js';
import { ALL_STATES, type DiagSocket, encodeDiagRequest, INET_DIAG, parseDiagChunk } from './sockdiag.js';

export type Protocol = 'tcp' | 'udp';

export interface DumpOptions {
  protocols?: Protocol[];
  families?: (4 | 6)[];
  /** TCP state mask (1 << state); every state by default. */
  states?: number;
}

/** Every socket of the given protocols and families, one sock_diag dump each. */
export function dumpSockets(opts: DumpOptions = {}): DiagSocket[] {
  const out: DiagSocket[] = [];
  let seq = 1;
  for (const proto of opts.protocols ?? ['tcp', 'udp']) {
    const protocol = proto === 'udp' ? IPPROTO_UDP : IPPROTO_TCP;
    for (const family of opts.families ?? [4, 6]) {
      const req = encodeDiagRequest({
        family,
        protocol,
        states: opts.states ?? ALL_STATES,
        ext: [INET_DIAG.INFO, INET_DIAG.SKMEMINFO],
        seq: seq++,
      });
      let complete = false;
      netlinkDump(NETLINK_SOCK_DIAG, req, (chunk) => {
        const r = parseDiagChunk(chunk, protocol);
        for (const s of r.sockets) out.push(s); // no spread: a chunk may carry thousands
        if (r.error) throw new SysError('sock_diag', r.error, `${proto} over IPv${family}`);
        complete = r.done;
        return r.done;
      });
      if (!complete) throw new SysError('sock_diag', 5, `${proto} over IPv${family}: the dump ended early`);
    }
  }
  return out;
}

/** One sample: the dump, when it was taken, and (unless `owners` is false) who owns each socket. */
export function takeSnapshot(opts: DumpOptions & { owners?: boolean } = {}): Snapshot {
  const atMs = performance.now();
  const sockets = dumpSockets(opts);
  return { atMs, sockets, owners: opts.owners === false ? undefined : socketOwners() };
}

/**
 * The sysctls analyze() compares against, read from this network namespace (or the /proc tree at
 * `root`). rmem_max and wmem_max stay undefined where they cannot be read (a namespace or container
 * that hides them): the reasons then say unknown rather than guess.
 */
export function readHostLimits(root?: string): HostLimits {
  const rmem = readSysctl('net.ipv4.tcp_rmem', root) ?? [4096, 131072, 6291456];
  const wmem = readSysctl('net.ipv4.tcp_wmem', root) ?? [4096, 16384, 4194304];
  const ports = readSysctl('net.ipv4.ip_local_port_range', root);
  return {
    tcpRmemMax: rmem[2],
    tcpWmemMax: wmem[2],
    rmemMax: readSysctl('net.core.rmem_max', root)?.[0],
    wmemMax: readSysctl('net.core.wmem_max', root)?.[0],
    ephemeralPorts: ports?.length === 2 ? [ports[0], ports[1]] : undefined,
  };
}

/** What inspectSockets takes: which sockets (ports, states, processes) and how many. */
export interface InspectOptions extends DumpOptions, SocketFilter {}

/** The states `state` may name: ss's TCP state names, and `unconnected` for UDP. */
export const SOCKET_STATES: readonly string[] = [...TCP_STATES.slice(1), 'unconnected'];

function checkOptions(opts: InspectOptions): void {
  if (opts.state !== undefined && !SOCKET_STATES.includes(opts.state))
    throw UsageError.invalid('state', opts.state, `one of ${SOCKET_STATES.join(', ')}`);
}

/** A dump the kernel refused is the environment's doing (no sock_diag, no permission): exit 3. */
function refused(err: unknown): unknown {
  return err instanceof SysError && err.syscall !== 'recv'
    ? new EnvironmentError(`inspect: the kernel refused the sock_diag dump: ${err.message}`, { cause: err })
    : err;
}

/** One look at the host's sockets: each socket with its buffers, tcp_info and flags. */
export interface InspectSample {
  /** Wall-clock time of the sample (ISO 8601). */
  time: string;
  /** Seconds since the previous sample; undefined for the first (ratios then cover each connection's life). */
  intervalSeconds?: number;
  sockets: InspectedSocket[];
}

/** One look at the host's sockets (ratios since each connection began, like ss). */
export function inspectSockets(opts: InspectOptions = {}): InspectSample {
  checkOptions(opts);
  let snap: Snapshot;
  try {
    snap = takeSnapshot(opts);
  } catch (err) {
    throw refused(err);
  }
  return { time: new Date().toISOString(), sockets: filterRows(analyze(snap, readHostLimits()), opts) };
}

/**
 * Samples every `intervalSeconds`; each sample's ratios and drops cover the interval since the one
 * before. Yields `count` samples (forever if undefined); the first covers the first interval, so
 * it comes after one interval. Stops early when `signal` aborts.
 */
export async function* watchSockets(
  opts: InspectOptions,
  intervalSeconds: number,
  count?: number,
  signal?: AbortSignal,
): AsyncGenerator<InspectSample> {
  checkOptions(opts);
  checkOption('watch', intervalSeconds, 'intervalSeconds');
  const host = readHostLimits();
  const snapshot = () => {
    try {
      return takeSnapshot(opts);
    } catch (err) {
      throw refused(err);
    }
  };
  let prev = snapshot();
  const memory = new FlagMemory();
  for (let i = 0; count === undefined || i < count; i++) {
    try {
      await sleep(intervalSeconds * 1000, undefined, { signal });
    } catch {
      return;
    }
    const cur = snapshot();
    const rows = analyze(cur, host, prev);
    memory.apply(rows);
    yield {
      time: new Date().toISOString(),
      intervalSeconds: Math.round(cur.atMs - prev.atMs) / 1000,
      sockets: filterRows(rows, opts),
    };
    prev = cur;
  }
}
