// The ends of the UDP benchmarks (bench udp, bench streamer): which sink and blast make each path,
// and the result row common to both. A path names the sender and the receiver together:
//   dgram      sendmmsg sender → node:dgram (one recvmsg and one JavaScript call per datagram)
//   batch      sendmmsg sender → batch receiver, recvmmsg only (GRO off)
//   gso-batch  UDP_SEGMENT sender → batch receiver without GRO (the kernel splits before the socket)
//   batch+gro  UDP_SEGMENT sender → batch receiver with UDP_GRO
//   netcat     sendmmsg sender (one flow) → OpenBSD `nc -u -l` writing a byte stream (seed 004's
//              "netcat instead of receive"; src/ends/nc-udp.child.ts counts whole datagrams of the size)

import { UsageError } from '../errors.js';
import { moduleFile } from '../sys/package.js';
import { lastEvent, numberField } from './ends.js';
import type { Ends, Row, RunOutput } from './scenario.js';

export const UDP_PATHS = {
  dgram: { receiver: 'dgram', gro: false, gso: false },
  batch: { receiver: 'batch', gro: false, gso: false },
  'gso-batch': { receiver: 'batch', gro: false, gso: true },
  'batch+gro': { receiver: 'batch', gro: true, gso: true },
  netcat: { receiver: 'netcat', gro: false, gso: false },
} as const;

const NC_END = moduleFile(new URL('../ends/nc-udp.child', import.meta.url));

export type UdpPath = keyof typeof UDP_PATHS;

export function parsePaths(value: string, option: string): UdpPath[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of items)
    if (!(p in UDP_PATHS)) throw UsageError.invalid(option, p, `${Object.keys(UDP_PATHS).join(', ')}`);
  if (!items.length) throw UsageError.invalid(option, value, 'a list');
  return items as UdpPath[];
}

export interface UdpRunSpec {
  rate: string;
  size: string;
  duration: string;
  flows?: number;
  sockets?: number;
  coalesce?: string;
  rcvbuf?: string;
}

export function udpEnds(path: UdpPath, s: UdpRunSpec): Ends {
  const p = UDP_PATHS[path];
  if (p.receiver === 'netcat') {
    // nc takes one sender: one flow, whatever was asked
    const blast = ['blast', 'udp', '--to', '{host}:{port}', '--rate', s.rate, '--size', s.size];
    blast.push('--duration', s.duration, '--gso', 'off', '--json');
    return {
      receiver: { module: NC_END, args: ['--host', '{host}', '--size', s.size, '--idle', '1s'] },
      sender: { sockbuf: blast },
      receiverStop: 'exit',
    };
  }
  const sink = ['sink', 'udp', '--listen', '{host}:0', '--receiver', p.receiver, '--idle', '1s', '--json'];
  if (p.receiver === 'batch') sink.push('--gro', p.gro ? 'on' : 'off');
  if (s.sockets) sink.push('--sockets', String(s.sockets));
  if (s.coalesce) sink.push('--coalesce', s.coalesce);
  if (s.rcvbuf) sink.push('--rcvbuf', s.rcvbuf);
  const blast = ['blast', 'udp', '--to', '{host}:{port}', '--rate', s.rate, '--size', s.size];
  blast.push('--duration', s.duration, '--gso', p.gso ? 'on' : 'off', '--json');
  if (s.flows) blast.push('--flows', String(s.flows));
  // Paced, many flows send one datagram each in turn, as a cluster's many peers do: the sender's
  // default burst (32 per sendmmsg, on one flow) would land whole on one of the SO_REUSEPORT sockets.
  if (s.flows && s.flows > 1 && s.rate !== 'max') blast.push('--batch', '1');
  return { receiver: { sockbuf: sink }, sender: { sockbuf: blast }, receiverStop: 'exit' };
}

const orNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The row of one run: what was sent, what came, where the rest went. */
export function udpRow(out: RunOutput): Row {
  const tx = lastEvent(out.sender, 'result');
  const rx = lastEvent(out.receiver, 'result');
  const sent = numberField(tx, 'sent');
  const received = numberField(rx, 'received');
  const dropped = sent - received;
  const ppb = rx.packetsPerBatch as { mean?: number } | undefined;
  return {
    sent,
    received,
    dropped,
    droppedPct: sent ? (100 * dropped) / sent : 0,
    kernelDrops: numberField(rx, 'kernelDrops'),
    // netcat's end knows neither (nc does not say); sockbuf's receivers always do
    userspaceDrops: orNull(rx.userspaceDrops),
    truncated: orNull(rx.truncated),
    lost: orNull(rx.lost),
    tailLost: typeof rx.tailLost === 'number' ? rx.tailLost : null,
    // seed 004's "drift of last message": how long after the sender's end the last datagram was taken
    driftSeconds:
      typeof rx.lastReceivedAtMs === 'number' && typeof tx.endedAtMs === 'number'
        ? (rx.lastReceivedAtMs - tx.endedAtMs) / 1000
        : null,
    sentPerSecond: numberField(tx, 'datagramsPerSecond'),
    receivedPerSecond: sent ? received / numberField(tx, 'seconds') : 0,
    packetsPerBatch: ppb?.mean ?? 1,
    jsCallsPerDatagram: orNull(rx.jsCallsPerDatagram),
    cpuUsPerDatagram: orNull(rx.cpuUsPerDatagram),
    kernelDropsUnit: String(rx.kernelDropsUnit),
    gro: rx.gro === true,
    gso: tx.gso === true,
  };
}
