// From sock_diag records to what inspect and the exporter show: per-socket figures, limited ratios
// over an interval (deltas between two samples, keyed by socket cookie), and the flags that mark a
// buffer-limited socket, with the reason in words. Pure: records and host limits in, rows out.

import { ADVICE } from '../policy/advice.js';
import { formatSize } from '../policy/units.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../sys/constants.js';
import type { SocketOwner } from './owners.js';
import type { DiagSocket } from './sockdiag.js';

/** A socket counts as limited by a buffer above this share of its busy time (seed 000: 98–100 %). */
export const LIMITED_PCT = 50;
/** "Far below" the autotuning maximum: at most this fraction of it. */
export const FAR_BELOW = 1 / 8;

/** The sysctls the rules compare against (same network namespace as the dump). */
export interface HostLimits {
  /** net.ipv4.tcp_rmem[2], the autotuning ceiling for receive buffers. */
  tcpRmemMax: number;
  /** net.ipv4.tcp_wmem[2]. */
  tcpWmemMax: number;
  /** net.core.rmem_max: the ceiling for SO_RCVBUF (and UDP). */
  rmemMax: number;
}

/**
 * The receive window scale this host offers an autotuned socket at the handshake
 * (tcp_select_initial_window: ilog2(max(tcp_rmem[2], rmem_max)) − 15, within 0..14). A socket whose
 * receive buffer was pinned (SO_RCVBUF) before the handshake offers less: its scale is sized to
 * the pinned buffer. Seed 000 shows it as wscale 2,7 against 7,7.
 */
export function autotunedWscale(h: HostLimits): number {
  const space = Math.max(h.tcpRmemMax, h.rmemMax, 1);
  return Math.min(14, Math.max(0, Math.floor(Math.log2(space)) - 15));
}

/** The kinds of problem inspect flags on a socket. */
export type FlagKind = 'rwnd-limited' | 'pinned-rcvbuf' | 'sndbuf-limited' | 'udp-drops';

/** Something inspect found wrong with a socket: what, and how bad. */
export interface Flag {
  kind: FlagKind;
  reason: string;
}

export interface Snapshot {
  /** When the sample was taken (ms, monotonic or wall: only differences are used). */
  atMs: number;
  sockets: DiagSocket[];
  owners?: Map<number, SocketOwner>;
}

/** One row of `sockbuf inspect`, and its --json object. */
export interface InspectedSocket {
  protocol: 'tcp' | 'udp';
  family: 4 | 6;
  state: string;
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  inode: number;
  cookie: string;
  pid?: number;
  command?: string;
  rttUs?: number;
  cwndSegments?: number;
  cwndBytes?: number;
  rcvWscale?: number;
  sndWscale?: number;
  /** Peer's advertised receive window (tcpi_snd_wnd). */
  sndWndBytes?: number;
  deliveryRateBytesPerSecond?: number;
  /** skmem r, rb, t, tb, d. */
  rmemBytes?: number;
  rcvbufBytes?: number;
  wmemBytes?: number;
  sndbufBytes?: number;
  drops?: number;
  /** Drops during the interval (undefined without a previous sample of this socket). */
  dropsInInterval?: number;
  busyMs?: number;
  rwndLimitedPct?: number;
  sndbufLimitedPct?: number;
  /** Seconds the ratios cover; undefined: since the connection began (one sample, like ss). */
  intervalSeconds?: number;
  limited: boolean;
  flags: Flag[];
}

const endpointKey = (h: string, p: number) => `${h.startsWith('::ffff:') ? h.slice(7) : h}|${p}`;
const connKey = (s: DiagSocket) =>
  `${s.protocol}|${endpointKey(s.localHost, s.localPort)}|${endpointKey(s.remoteHost, s.remotePort)}`;
const peerKey = (s: DiagSocket) =>
  `${s.protocol}|${endpointKey(s.remoteHost, s.remotePort)}|${endpointKey(s.localHost, s.localPort)}`;
const pct = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);
const hp = (h: string, p: number) => (h.includes(':') ? `[${h}]:${p}` : `${h}:${p}`);

/** Is this receive side pinned small? Evidence in words, or undefined. */
function pinnedReceive(s: DiagSocket, h: HostLimits, expected: number): string | undefined {
  const t = s.tcpInfo;
  const rb = s.skmem?.rcvbuf;
  if (t?.rcvWscale === undefined || rb === undefined) return undefined;
  if (t.rcvWscale >= expected || rb > h.tcpRmemMax * FAR_BELOW) return undefined;
  return (
    `receive buffer ${formatSize(rb)}, far below tcp_rmem max ${formatSize(h.tcpRmemMax)}, ` +
    `window scale ${t.rcvWscale} where autotuning offers ${expected}: ${ADVICE.pinnedRcvbuf.cause}`
  );
}

/**
 * Rows for every socket of `cur`, with ratios over the interval since `prev` when it holds the
 * same socket (same cookie), and the flags. Pure.
 */
export function analyze(cur: Snapshot, host: HostLimits, prev?: Snapshot): InspectedSocket[] {
  const expected = autotunedWscale(host);
  const before = new Map<string, DiagSocket>();
  for (const s of prev?.sockets ?? []) before.set(`${s.protocol}|${s.cookie}`, s);
  // where each connection is in cur.sockets (and rows), by its two ends
  const byConn = new Map<string, number>();
  cur.sockets.forEach((s, i) => {
    if (s.remotePort !== 0) byConn.set(connKey(s), i);
  });
  const seconds = prev ? Math.round(cur.atMs - prev.atMs) / 1000 : undefined;

  const rows = cur.sockets.map((s): InspectedSocket => {
    const t = s.tcpInfo;
    const m = s.skmem;
    const owner = cur.owners?.get(s.inode);
    const old = before.get(`${s.protocol}|${s.cookie}`);
    const row: InspectedSocket = {
      protocol: s.protocol === IPPROTO_UDP ? 'udp' : 'tcp',
      family: s.family,
      state: s.protocol === IPPROTO_UDP && s.state === 7 ? 'unconnected' : s.stateName,
      localAddress: s.localHost,
      localPort: s.localPort,
      remoteAddress: s.remoteHost,
      remotePort: s.remotePort,
      inode: s.inode,
      cookie: s.cookie,
      pid: owner?.pid,
      command: owner?.command,
      rmemBytes: m?.rmemAlloc,
      rcvbufBytes: m?.rcvbuf,
      wmemBytes: m?.wmemAlloc,
      sndbufBytes: m?.sndbuf,
      drops: m?.drops,
      limited: false,
      flags: [],
    };
    if (m?.drops !== undefined && old?.skmem?.drops !== undefined) {
      row.dropsInInterval = Math.max(0, m.drops - old.skmem.drops);
    } else if (m?.drops !== undefined && prev && !old) {
      row.dropsInInterval = m.drops; // opened since the previous sample: every drop is in the interval
    }
    if (t && s.stateName !== 'listen') {
      row.rttUs = t.rtt;
      row.cwndSegments = t.sndCwnd;
      row.cwndBytes = t.sndCwnd * t.sndMss;
      row.rcvWscale = t.rcvWscale;
      row.sndWscale = t.sndWscale;
      row.sndWndBytes = t.sndWnd;
      row.deliveryRateBytesPerSecond = t.deliveryRate;
      if (t.busyTime !== undefined) {
        const o = old?.tcpInfo;
        const since = o?.busyTime !== undefined && seconds !== undefined;
        const busy = since ? t.busyTime - (o.busyTime ?? 0) : t.busyTime;
        const rwnd = since ? (t.rwndLimited ?? 0) - (o.rwndLimited ?? 0) : (t.rwndLimited ?? 0);
        const sndbuf = since ? (t.sndbufLimited ?? 0) - (o.sndbufLimited ?? 0) : (t.sndbufLimited ?? 0);
        row.busyMs = Math.round(busy / 1000);
        row.rwndLimitedPct = pct(rwnd, busy);
        row.sndbufLimitedPct = pct(sndbuf, busy);
        if (since) row.intervalSeconds = seconds;
      }
    }
    return row;
  });

  // The rules. Each socket is judged with its local peer when the peer is on this host too.
  cur.sockets.forEach((s, i) => {
    const row = rows[i];
    const t = s.tcpInfo;
    if (s.protocol === IPPROTO_TCP && t) {
      const peerAt = byConn.get(peerKey(s));
      const peer = peerAt === undefined ? undefined : cur.sockets[peerAt];
      if ((row.rwndLimitedPct ?? 0) > LIMITED_PCT) {
        const why = `rwnd-limited ${row.rwndLimitedPct}% of busy time: the peer's receive window is the limit`;
        const peerPinned = peer && pinnedReceive(peer, host, expected);
        if (peerPinned) {
          row.flags.push({
            kind: 'rwnd-limited',
            reason: `${why}; peer ${hp(peer.localHost, peer.localPort)} on this host has a ${peerPinned}`,
          });
        } else if (
          !peer &&
          t.sndWscale !== undefined &&
          t.sndWscale < Math.min(expected, 7) - 2 &&
          (t.sndWnd ?? 0) <= host.tcpRmemMax * FAR_BELOW
        ) {
          row.flags.push({
            kind: 'rwnd-limited',
            reason:
              `${why}; the peer offers window scale ${t.sndWscale} (an autotuned Linux peer offers 7 or more) ` +
              `and a window of ${formatSize(t.sndWnd ?? 0)}: its receive buffer looks pinned (SO_RCVBUF)`,
          });
        }
      }
      const ownPinned = pinnedReceive(s, host, expected);
      if (ownPinned) {
        const peerRow = peerAt === undefined ? undefined : rows[peerAt];
        const m = s.skmem;
        if (peer && peerRow && (peerRow.rwndLimitedPct ?? 0) > LIMITED_PCT) {
          row.flags.push({
            kind: 'pinned-rcvbuf',
            reason: `${ownPinned}; its sender ${hp(peer.localHost, peer.localPort)} is rwnd-limited ${peerRow.rwndLimitedPct}%`,
          });
        } else if (!peer && m && m.rmemAlloc * 2 >= m.rcvbuf && (t.lastDataRecv ?? Infinity) < 1000) {
          row.flags.push({
            kind: 'pinned-rcvbuf',
            reason: `${ownPinned}; it is receiving and ${formatSize(m.rmemAlloc)} of it is queued`,
          });
        }
      }
      const tb = s.skmem?.sndbuf;
      if (
        (row.sndbufLimitedPct ?? 0) > LIMITED_PCT &&
        tb !== undefined &&
        tb <= host.tcpWmemMax * FAR_BELOW
      ) {
        row.flags.push({
          kind: 'sndbuf-limited',
          reason:
            `sndbuf-limited ${row.sndbufLimitedPct}% of busy time with a send buffer of ${formatSize(tb)}, ` +
            `far below tcp_wmem max ${formatSize(host.tcpWmemMax)}: ${ADVICE.pinnedSndbuf.cause}`,
        });
      }
    }
    if (s.protocol === IPPROTO_UDP && s.skmem) {
      const d = row.dropsInInterval ?? (prev ? 0 : (s.skmem.drops ?? 0));
      if (d > 0) {
        const when = row.dropsInInterval !== undefined ? `in the last ${seconds}s` : 'since it opened';
        const raise =
          s.skmem.rcvbuf < host.rmemMax * 2
            ? `; SO_RCVBUF can go up to ${formatSize(host.rmemMax * 2)} (rmem_max ${formatSize(host.rmemMax)}) without privilege`
            : `; ${ADVICE.udpRcvbufAtMax.cause}: ${ADVICE.udpRcvbufAtMax.fix}`;
        row.flags.push({
          kind: 'udp-drops',
          reason: `${d} datagrams dropped ${when}: receive buffer ${formatSize(s.skmem.rcvbuf)} full (${formatSize(s.skmem.rmemAlloc)} queued)${raise}`,
        });
      }
    }
    row.limited = row.flags.length > 0;
  });
  return rows;
}

export interface SocketFilter {
  port?: number;
  pid?: number;
  state?: string;
  limitedOnly?: boolean;
}

/** The rows a filter keeps: --port matches either end, --state the ss state name. */
export function filterRows(rows: InspectedSocket[], f: SocketFilter): InspectedSocket[] {
  return rows.filter(
    (r) =>
      (f.port === undefined || r.localPort === f.port || r.remotePort === f.port) &&
      (f.pid === undefined || r.pid === f.pid) &&
      (f.state === undefined || r.state === f.state) &&
      (!f.limitedOnly || r.limited),
  );
}
