// `sockbuf inspect`'s output: the table for people and the JSON document, from one sample. Pure.

import { formatHostPort } from '../policy/address.js';
import { printable } from '../policy/printable.js';
import { formatTable } from '../policy/table.js';
import { formatSize } from '../policy/units.js';
import type { InspectedSocket } from './analyze.js';
import type { InspectSample } from './inspect.js';

const size = (n?: number) => (n === undefined ? '-' : formatSize(n).replace(' ', ''));
const ep = (host: string, port: number) => formatHostPort({ host, port });

/** The table for people: one row per socket, then the reasons of the flagged ones. */
export function formatInspectSample(s: InspectSample): string {
  const rows = s.sockets.map((r: InspectedSocket) => [
    r.protocol,
    r.state,
    ep(r.localAddress, r.localPort),
    r.remotePort ? ep(r.remoteAddress, r.remotePort) : '*',
    // a process names itself (prctl PR_SET_NAME): any byte but NUL, shown escaped
    r.pid === undefined ? '-' : `${r.pid}/${printable(String(r.command))}`,
    r.rttUs === undefined ? '-' : `${(r.rttUs / 1000).toFixed(2)}ms`,
    r.cwndSegments === undefined ? '-' : String(r.cwndSegments),
    `${size(r.rmemBytes)}/${size(r.rcvbufBytes)}`,
    `${size(r.wmemBytes)}/${size(r.sndbufBytes)}`,
    r.dropsInInterval !== undefined ? `+${r.dropsInInterval}` : String(r.drops ?? '-'),
    r.busyMs ? `${r.rwndLimitedPct}%` : '-',
    r.busyMs ? `${r.sndbufLimitedPct}%` : '-',
    r.flags.map((f) => f.kind).join(','),
  ]);
  const right = (title: string) => ({ title, align: 'right' as const });
  const left = (title: string) => ({ title, align: 'left' as const });
  const head = [
    ...['proto', 'state', 'local', 'remote', 'pid/command'].map(left),
    ...['rtt', 'cwnd', 'r/rb', 't/tb', 'drops', 'rwnd-lim', 'sndbuf-lim'].map(right),
    'flag',
  ];
  const span = s.intervalSeconds === undefined ? 'since open' : `last ${s.intervalSeconds}s`;
  const out = [formatTable(head, rows)];
  out.push(
    `${s.sockets.length} sockets; limited shares of busy time ${span}; r/rb, t/tb = skmem queued/limit`,
  );
  for (const r of s.sockets.filter((x) => x.limited)) {
    const who = `${r.protocol} ${ep(r.localAddress, r.localPort)}${r.remotePort ? ` → ${ep(r.remoteAddress, r.remotePort)}` : ''}`;
    for (const f of r.flags) out.push(`! ${who}: ${f.reason}`);
  }
  return `${out.join('\n')}\n`;
}

/** The sample as `sockbuf inspect --json` prints it. */
export function inspectDocument(s: InspectSample): Record<string, unknown> {
  return { schema: 'sockbuf.v1', command: 'inspect', ...s };
}
