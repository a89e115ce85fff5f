// What a flagged socket's reason says about its pinned buffer: whether it sits at the kernel's
// ceiling (2 × net.core.rmem_max or wmem_max: the program asked for at least that much and the kernel
// clamped it), and who set it, in the program's own terms, for this socket (programs.ts). Pure: the
// host's limits, a row and its flags in, words appended to the reasons.
import { formatSize } from '../policy/units.js';
import { type PlaceContext, type SocketPlace, setterOf } from './programs.js';

/** The sysctls the rules compare against (same network namespace as the dump). */
export interface HostLimits {
  /** net.ipv4.tcp_rmem[2], the autotuning ceiling for receive buffers. */
  tcpRmemMax: number;
  /** net.ipv4.tcp_wmem[2]. */
  tcpWmemMax: number;
  /** net.core.rmem_max: the ceiling for SO_RCVBUF (and UDP); undefined where it cannot be read. */
  rmemMax?: number;
  /** net.core.wmem_max: the ceiling for SO_SNDBUF; undefined where it cannot be read. */
  wmemMax?: number;
  /** net.ipv4.ip_local_port_range, which tells an accepted connection whose listener is gone. */
  ephemeralPorts?: [number, number];
}

export type BufferSide = 'receive' | 'send';
const SYSCTL = { receive: 'net.core.rmem_max', send: 'net.core.wmem_max' } as const;
const AUTOTUNING = { receive: 'tcp_rmem', send: 'tcp_wmem' } as const;
const OPTION = { receive: 'SO_RCVBUF', send: 'SO_SNDBUF' } as const;

/** net.core.rmem_max or wmem_max, as read (undefined: unknown). */
export const coreMax = (h: HostLimits, side: BufferSide) => (side === 'receive' ? h.rmemMax : h.wmemMax);

/**
 * Whether a pinned buffer of `bytes` (skmem rb or tb) sits at the kernel's ceiling, in words; '' for
 * one pinned below it (reported as before). Where the sysctl cannot be read it says so: unknown,
 * never a guessed default. `waysOut` false leaves the two ways out to a setter that has its own
 * (osiris: no setting stops the call). Pure.
 */
export function ceilingText(side: BufferSide, bytes: number, h: HostLimits, waysOut = true): string {
  const name = SYSCTL[side];
  const max = coreMax(h, side);
  if (max === undefined)
    return `${name} is unknown (it cannot be read in this network namespace), so whether ${formatSize(bytes)} is the kernel's ceiling is unknown`;
  if (bytes !== 2 * max) return '';
  const auto = side === 'receive' ? h.tcpRmemMax : h.tcpWmemMax;
  return (
    `it sits at the kernel's ceiling, 2 × ${name} (${name} = ${max}, ${formatSize(max)}): the program asked ` +
    `${OPTION[side]} for at least ${max} bytes and the kernel clamped it; autotuning would allow up to ` +
    `${formatSize(auto)} (${AUTOTUNING[side]} max)` +
    (waysOut ? `: stop setting it (autotuning then sizes it), or raise ${name}, which keeps it pinned` : '')
  );
}

/** A row as the advice needs it. */
export interface AdvisedRow extends SocketPlace {
  command?: string;
  rcvbufBytes?: number;
  sndbufBytes?: number;
  flags: { kind: string; reason: string }[];
}

const clause = (text: string) => (text ? `; ${text}` : '');

/**
 * Appends to each flag of `row` the ceiling (its own buffer at 2 × the sysctl) and who set it, in
 * the setting program's terms: its own program for its own pinned buffer; for a sender held back by
 * its peer's window, the peer's program when the peer is on this host, else what this socket's
 * program says of its peer (osiris's leader of its follower), and its own send buffer when that sits
 * at the ceiling too (osiris's leader: replica_sndbuf). A stalled reader gets neither: no setsockopt
 * is the cause. Pure.
 */
export function advisePins(row: AdvisedRow, host: HostLimits, ctx: PlaceContext, peer?: AdvisedRow): void {
  const own = setterOf(row.command, row, ctx);
  const peerSetter = peer && setterOf(peer.command, peer, ctx);
  const inProgram = (who: typeof own, text: string | undefined) =>
    who && text ? `; in ${who.command} (${who.what}): ${text}` : '';
  for (const f of row.flags) {
    if (f.kind === 'pinned-rcvbuf' && row.rcvbufBytes !== undefined) {
      const text = own?.rcvbuf;
      f.reason +=
        clause(ceilingText('receive', row.rcvbufBytes, host, !(text && own?.waysOut))) + inProgram(own, text);
    } else if ((f.kind === 'pinned-sndbuf' || f.kind === 'sndbuf-limited') && row.sndbufBytes !== undefined) {
      const text = own?.sndbuf;
      f.reason +=
        clause(ceilingText('send', row.sndbufBytes, host, !(text && own?.waysOut))) + inProgram(own, text);
    } else if (f.kind === 'rwnd-limited') {
      f.reason += peer ? inProgram(peerSetter, peerSetter?.rcvbuf) : inProgram(own, own?.peerRcvbuf);
      const tb = row.sndbufBytes;
      const wmem = host.wmemMax;
      if (tb !== undefined && wmem !== undefined && tb === 2 * wmem && tb < host.tcpWmemMax)
        f.reason += `; its own send buffer is pinned too: ${ceilingText('send', tb, host, !(own?.sndbuf && own.waysOut))}${inProgram(own, own?.sndbuf)}`;
    }
  }
}

/** A series' pinned buffer as the exporter labels it (sockbuf_socket_pin_info). */
export interface PinInfo {
  buffer: BufferSide;
  /** The setter's id (programs.ts) where one names this side; '' where sockbuf cannot tell. */
  setter: string;
  /** At 2 × net.core.rmem_max/wmem_max: yes or no; unknown where the sysctl cannot be read. */
  ceiling: 'yes' | 'no' | 'unknown';
}

/**
 * The pinned buffers of a flagged row, once each: the receive buffer of a pinned-rcvbuf, the send
 * buffer of a pinned-sndbuf or sndbuf-limited, and the send buffer of an rwnd-limited sender when it
 * sits at the ceiling (osiris's leader). The same facts as advisePins, as labels. Pure.
 */
export function pinInfo(
  row: AdvisedRow,
  command: string | undefined,
  host: HostLimits,
  listening: ReadonlySet<number>,
): PinInfo[] {
  const who = setterOf(command, row, { listening, ephemeralPorts: host.ephemeralPorts });
  const out = new Map<BufferSide, PinInfo>();
  const add = (buffer: BufferSide, bytes: number | undefined) => {
    if (bytes === undefined || out.has(buffer)) return;
    const max = coreMax(host, buffer);
    const text = buffer === 'receive' ? who?.rcvbuf : who?.sndbuf;
    out.set(buffer, {
      buffer,
      setter: who && text ? who.id : '',
      ceiling: max === undefined ? 'unknown' : bytes === 2 * max ? 'yes' : 'no',
    });
  };
  for (const f of row.flags) {
    if (f.kind === 'pinned-rcvbuf') add('receive', row.rcvbufBytes);
    else if (f.kind === 'pinned-sndbuf' || f.kind === 'sndbuf-limited') add('send', row.sndbufBytes);
    else if (f.kind === 'rwnd-limited') {
      const tb = row.sndbufBytes;
      if (tb !== undefined && tb === 2 * (host.wmemMax ?? Number.NaN) && tb < host.tcpWmemMax)
        add('send', tb);
    }
  }
  return [...out.values()];
}
