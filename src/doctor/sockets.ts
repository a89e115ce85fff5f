// The doctor's sockets section: the sockets of this host that a pinned buffer holds back while they
// carry load, and the readers that stopped reading, one line each, from two sock_diag samples (the
// rules are inspect's: src/observe/analyze.ts). It points to `sockbuf inspect` for the whole view.
import { setTimeout as sleep } from 'node:timers/promises';
import { analyze, type FlagKind, type InspectedSocket } from '../observe/analyze.js';
import { readHostLimits, takeSnapshot } from '../observe/inspect.js';
import { formatHostPort } from '../policy/address.js';
import { printable } from '../policy/printable.js';

/** The kinds the section lists (UDP drops are the drop counters' business). */
const KINDS: readonly FlagKind[] = [
  'pinned-rcvbuf',
  'pinned-sndbuf',
  'sndbuf-limited',
  'rwnd-limited',
  'stalled-reader',
];

export interface SocketFinding {
  kind: FlagKind;
  protocol: 'tcp' | 'udp';
  local: string;
  remote: string;
  pid?: number;
  command?: string;
  reason: string;
}

/** Flagged TCP sockets over a `sampleMs` interval (two dumps of every TCP socket). */
export async function socketFindings(sampleMs = 500): Promise<SocketFinding[]> {
  const first = takeSnapshot({ protocols: ['tcp'] });
  await sleep(sampleMs);
  const rows = analyze(takeSnapshot({ protocols: ['tcp'] }), readHostLimits(), first);
  return findingsOf(rows);
}

/** The rows' flags of the listed kinds, one finding each. Pure. */
export function findingsOf(rows: InspectedSocket[]): SocketFinding[] {
  return rows.flatMap((r) =>
    r.flags
      .filter((f) => KINDS.includes(f.kind))
      .map((f) => ({
        kind: f.kind,
        protocol: r.protocol,
        local: formatHostPort({ host: r.localAddress, port: r.localPort }),
        remote: formatHostPort({ host: r.remoteAddress, port: r.remotePort }),
        pid: r.pid,
        command: r.command,
        reason: f.reason,
      })),
  );
}

/** The section as the doctor prints it: one line a socket, then where to look further. Pure. */
export function formatSocketFindings(found: SocketFinding[]): string[] {
  const out = ['Sockets on this host (two samples, 0.5 s apart):'];
  if (!found.length) {
    out.push('  no pinned buffer holds back a loaded socket, no reader stalled.');
    return out;
  }
  for (const f of found) {
    const who = f.pid === undefined ? '' : ` (${printable(String(f.command))}, pid ${f.pid})`;
    const port = f.local.slice(f.local.lastIndexOf(':') + 1);
    out.push(
      `! ${f.kind}: ${f.protocol} ${f.local} → ${f.remote}${who}: ${f.reason} (sockbuf inspect --port ${port} --watch 1s)`,
    );
  }
  return out;
}
