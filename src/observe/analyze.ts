// From sock_diag records to what inspect and the exporter show: per-socket figures, limited ratios
// over an interval (deltas between two samples, keyed by socket cookie), and the flags that mark a
// buffer-limited socket, with the reason in words. Pure: records and host limits in, rows out.

import { ADVICE } from '../policy/advice.js';
import { formatSize } from '../policy/units.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../sys/constants.js';
import type { SocketOwner } from './owners.js';
import { advisePins, type HostLimits } from './pin-advice.js';
import { type PlaceContext, type SocketRole, socketRole } from './programs.js';
import type { DiagSocket } from './sockdiag.js';
import {
  busyShare,
  FAR_BELOW,
  intervalRate,
  pinnedSender,
  type Sample,
  stalledReceiver,
  stalledSender,
  windowLimitedReceiver,
} from './tcp-rules.js';

export type { HostLimits };
export { FAR_BELOW };
/** A socket counts as limited by a buffer above this share of its busy time (seed 000: 98–100 %). */
export const LIMITED_PCT = 50;

/**
 * The receive window scale this host offers an autotuned socket at the handshake
 * (tcp_select_initial_window: ilog2(max(tcp_rmem[2], rmem_max)) − 15, within 0..14). A socket whose
 * receive buffer was pinned (SO_RCVBUF) before the handshake offers less: its scale is sized to
 * the pinned buffer. Seed 000 shows it as wscale 2,7 against 7,7.
 */
export function autotunedWscale(h: HostLimits): number {
  const space = Math.max(h.tcpRmemMax, h.rmemMax ?? 0, 1);
  return Math.min(14, Math.max(0, Math.floor(Math.log2(space)) - 15));
}

/**
 * rwnd-limited: a sender held back by its peer's (pinned) receive window; pinned-rcvbuf: a receiver
 * whose pinned buffer limits its sender; pinned-sndbuf: a sender whose pinned send buffer is full and
 * the limit; sndbuf-limited: the kernel's sndbuf_limited counter above half the busy time with a small
 * buffer; stalled-reader: a receiver that stopped reading (zero window), or its sender; udp-drops.
 */
export type FlagKind =
  | 'rwnd-limited'
  | 'pinned-rcvbuf'
  | 'pinned-sndbuf'
  | 'sndbuf-limited'
  | 'stalled-reader'
  | 'udp-drops';

/** Every kind, in the order the exporter lists them. */
export const FLAG_KINDS: readonly FlagKind[] = [
  'rwnd-limited',
  'pinned-rcvbuf',
  'pinned-sndbuf',
  'sndbuf-limited',
  'stalled-reader',
  'udp-drops',
];

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
  /** listener, accepted (its listener may be gone: its local port is no ephemeral one) or client. */
  role: SocketRole;
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
  /** The window this socket advertises (tcpi_rcv_wnd, kernel ≥ 6.2). */
  rcvWndBytes?: number;
  minRttUs?: number;
  deliveryRateBytesPerSecond?: number;
  /** Recv-Q and Send-Q as ss prints them (bytes not read; bytes not acknowledged). */
  recvQueueBytes?: number;
  sendQueueBytes?: number;
  /** Bytes acknowledged by the peer / received, per second over the interval. */
  sentBytesPerSecond?: number;
  receivedBytesPerSecond?: number;
  /** Share of the interval the socket was busy sending, in [0, 1] (tcp_info busy time). */
  busyRatio?: number;
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

/** Is this receive side pinned small? Evidence in words (without the cause), or undefined. */
function pinnedReceive(s: DiagSocket, h: HostLimits, expected: number): string | undefined {
  const t = s.tcpInfo;
  const rb = s.skmem?.rcvbuf;
  if (t?.rcvWscale === undefined || rb === undefined) return undefined;
  if (t.rcvWscale >= expected || rb > h.tcpRmemMax * FAR_BELOW) return undefined;
  return (
    `receive buffer ${formatSize(rb)}, far below tcp_rmem max ${formatSize(h.tcpRmemMax)}, ` +
    `window scale ${t.rcvWscale} where autotuning offers ${expected}`
  );
}

/** `; 12 packets dropped in the last 2s` for a TCP socket that dropped, or ''. */
function dropsText(row: InspectedSocket, prev: boolean): string {
  const d = prev ? (row.dropsInInterval ?? 0) : (row.drops ?? 0);
  if (d <= 0) return '';
  const when = prev ? `in the last ${row.intervalSeconds ?? '?'}s` : 'since it opened';
  return `; ${d} packets dropped ${when} (skmem d: arrivals the full receive queue could not take)`;
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
  const listening = new Set(
    cur.sockets.filter((s) => s.protocol === IPPROTO_TCP && s.stateName === 'listen').map((s) => s.localPort),
  );
  const ctx: PlaceContext = { listening, ephemeralPorts: host.ephemeralPorts };

  const rows = cur.sockets.map((s): InspectedSocket => {
    const t = s.tcpInfo;
    const m = s.skmem;
    const owner = cur.owners?.get(s.inode);
    const old = before.get(`${s.protocol}|${s.cookie}`);
    const protocol = s.protocol === IPPROTO_UDP ? 'udp' : 'tcp';
    const state = s.protocol === IPPROTO_UDP && s.state === 7 ? 'unconnected' : s.stateName;
    const place = { protocol, state, localPort: s.localPort, remotePort: s.remotePort } as const;
    const row: InspectedSocket = {
      protocol,
      family: s.family,
      state,
      role: socketRole(place, ctx),
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
      recvQueueBytes: s.rqueue,
      sendQueueBytes: s.wqueue,
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
      row.rcvWndBytes = t.rcvWnd;
      row.minRttUs = t.minRtt && t.minRtt !== 0xffffffff ? t.minRtt : undefined;
      row.deliveryRateBytesPerSecond = t.deliveryRate;
      const x: Sample = { s, old, seconds };
      row.sentBytesPerSecond = intervalRate(x, 'bytesAcked');
      row.receivedBytesPerSecond = intervalRate(x, 'bytesReceived');
      row.busyRatio = busyShare(x);
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

  // The rules. Each socket is judged alone (the host that pinned must tell without its peer), and
  // with its local peer when the peer is on this host too.
  const stalled = cur.sockets.map((s) => {
    const x: Sample = { s, old: before.get(`${s.protocol}|${s.cookie}`), seconds };
    return s.protocol === IPPROTO_TCP ? stalledReceiver(x) : undefined;
  });
  cur.sockets.forEach((s, i) => {
    const row = rows[i];
    const t = s.tcpInfo;
    if (s.protocol === IPPROTO_TCP && t && s.stateName !== 'listen') {
      const x: Sample = { s, old: before.get(`${s.protocol}|${s.cookie}`), seconds };
      const drops = dropsText(row, !!prev);
      const peerAt = byConn.get(peerKey(s));
      const peer = peerAt === undefined ? undefined : cur.sockets[peerAt];
      const peerRow = peerAt === undefined ? undefined : rows[peerAt];
      const peerName =
        peer &&
        `${hp(peer.localHost, peer.localPort)}${peerRow?.pid ? ` (${peerRow.command}, pid ${peerRow.pid})` : ''}`;
      // a stalled reader first: neither end is then told to remove a setsockopt
      const ownPinned = pinnedReceive(s, host, expected);
      if (stalled[i]) {
        const pin = ownPinned ? `; its ${ownPinned} is pinned too, but that is not the cause` : '';
        row.flags.push({ kind: 'stalled-reader', reason: `${stalled[i]}${pin}${drops}` });
      }
      const peerStalled = peerAt !== undefined && stalled[peerAt];
      const stalledWhy = peerStalled
        ? `its reader ${peerName} on this host stopped reading: zero window with ${formatSize(s.wqueue)} waiting to be sent`
        : stalledSender(x);
      if (stalledWhy) row.flags.push({ kind: 'stalled-reader', reason: stalledWhy });
      else if ((row.rwndLimitedPct ?? 0) > LIMITED_PCT) {
        const why = `rwnd-limited ${row.rwndLimitedPct}% of busy time: the peer's receive window is the limit`;
        const peerPinned = peer && pinnedReceive(peer, host, expected);
        if (peerPinned) {
          row.flags.push({
            kind: 'rwnd-limited',
            reason: `${why}; peer ${peerName} on this host has a ${peerPinned}: ${ADVICE.pinnedRcvbuf.cause}`,
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
      if (ownPinned && !stalled[i]) {
        const cause = `${ownPinned}: ${ADVICE.pinnedRcvbuf.cause}`;
        const receiving = windowLimitedReceiver(x, row.dropsInInterval ?? (prev ? 0 : (row.drops ?? 0)));
        if (peer && peerRow && (peerRow.rwndLimitedPct ?? 0) > LIMITED_PCT) {
          row.flags.push({
            kind: 'pinned-rcvbuf',
            reason: `${cause}; its sender ${peerName} is rwnd-limited ${peerRow.rwndLimitedPct}%${drops}`,
          });
        } else if (receiving) {
          row.flags.push({ kind: 'pinned-rcvbuf', reason: `${cause}; ${receiving}` });
        }
      }
      const pinnedSend = pinnedSender(x, host.tcpWmemMax);
      const tb = s.skmem?.sndbuf;
      if (pinnedSend) {
        const to = peerName ? `; its reader ${peerName} is on this host` : '';
        row.flags.push({ kind: 'pinned-sndbuf', reason: `${pinnedSend}${to}` });
      } else if (
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
      // the ceiling, and what to change in the pinning program's own terms, where it is known
      advisePins(row, host, ctx, peerRow);
    }
    if (s.protocol === IPPROTO_UDP && s.skmem) {
      const d = row.dropsInInterval ?? (prev ? 0 : (s.skmem.drops ?? 0));
      if (d > 0) {
        const when = row.dropsInInterval !== undefined ? `in the last ${seconds}s` : 'since it opened';
        const max = host.rmemMax;
        const raise =
          max === undefined
            ? '; net.core.rmem_max is unknown (it cannot be read in this network namespace)'
            : s.skmem.rcvbuf < max * 2
              ? `; SO_RCVBUF can go up to ${formatSize(max * 2)} (rmem_max ${formatSize(max)}) without privilege`
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
