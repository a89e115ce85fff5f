// `sockbuf inspect`: every TCP and UDP socket of the host through sock_diag, with the buffer-limited
// ones flagged. Parses options, calls src/observe/inspect.ts, prints.
import type { Command } from 'commander';
import { formatTable } from '../bench/table.js';
import type { InspectedSocket } from '../observe/analyze.js';
import { type InspectOptions, type InspectSample, inspectSockets, watchSockets } from '../observe/inspect.js';
import { formatHostPort } from '../policy/address.js';
import { EnvironmentError, formatSize, parseCount, parseDuration, UsageError } from '../policy/units.js';
import { TCP_STATES } from '../sys/constants.js';
import { SysError } from '../sys/errors.js';

const STATES = [...TCP_STATES.slice(1), 'unconnected'];

const size = (n?: number) => (n === undefined ? '-' : formatSize(n).replace(' ', ''));
const ep = (host: string, port: number) => formatHostPort({ host, port });

/** The table for people: one row per socket, then the reasons of the flagged ones. */
export function formatSample(s: InspectSample): string {
  const rows = s.sockets.map((r: InspectedSocket) => [
    r.protocol,
    r.state,
    ep(r.localAddress, r.localPort),
    r.remotePort ? ep(r.remoteAddress, r.remotePort) : '*',
    r.pid === undefined ? '-' : `${r.pid}/${r.command}`,
    r.rttUs === undefined ? '-' : `${(r.rttUs / 1000).toFixed(2)}ms`,
    r.cwndSegments === undefined ? '-' : String(r.cwndSegments),
    `${size(r.rmemBytes)}/${size(r.rcvbufBytes)}`,
    `${size(r.wmemBytes)}/${size(r.sndbufBytes)}`,
    r.dropsInInterval !== undefined ? `+${r.dropsInInterval}` : String(r.drops ?? '-'),
    r.busyMs ? `${r.rwndLimitedPct}%` : '-',
    r.busyMs ? `${r.sndbufLimitedPct}%` : '-',
    r.limited ? 'LIMITED' : '',
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

function json(s: InspectSample): Record<string, unknown> {
  return { schema: 'sockbuf.v1', command: 'inspect', ...s };
}

export function register(program: Command): void {
  program
    .command('inspect')
    .description(
      'every TCP and UDP socket on the host (sock_diag, like ss), with buffer-limited ones flagged',
    )
    .option('--port <n>', 'only sockets with this local or remote port')
    .option('--pid <n>', 'only sockets owned by this process')
    .option('--state <name>', `only sockets in this state (${STATES.join(', ')})`)
    .option('--tcp', 'TCP sockets only')
    .option('--udp', 'UDP sockets only')
    .option('--limited', 'only sockets flagged as buffer-limited')
    .option('--watch <duration>', 'sample every interval; limited shares and drops cover each interval')
    .option('--count <n>', 'with --watch: stop after this many samples')
    .option('--json', 'JSON on stdout (one line per sample with --watch)')
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const opts: InspectOptions = {
        port: o.port === undefined ? undefined : parseCount(String(o.port), '--port', 1, 65535),
        pid: o.pid === undefined ? undefined : parseCount(String(o.pid), '--pid', 1),
        state: o.state === undefined ? undefined : String(o.state),
        limitedOnly: o.limited === true,
        protocols: o.tcp && !o.udp ? ['tcp'] : o.udp && !o.tcp ? ['udp'] : ['tcp', 'udp'],
      };
      if (opts.state !== undefined && !STATES.includes(opts.state))
        throw new UsageError(
          `invalid value for --state: '${opts.state}' (expected one of ${STATES.join(', ')})`,
        );
      const interval = o.watch === undefined ? undefined : parseDuration(String(o.watch), '--watch');
      if (interval !== undefined && !(interval >= 0.05 && interval <= 3600))
        throw new UsageError(`invalid value for --watch: '${o.watch}' (expected 50ms to 1h)`);
      if (o.count !== undefined && interval === undefined)
        throw new UsageError(`--count '${o.count}' needs --watch`);
      const count = o.count === undefined ? undefined : parseCount(String(o.count), '--count', 1);
      try {
        if (interval === undefined) {
          const s = inspectSockets(opts);
          process.stdout.write(o.json ? `${JSON.stringify(json(s), null, 2)}\n` : formatSample(s));
          return;
        }
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        const live = !o.json && process.stdout.isTTY === true;
        try {
          for await (const s of watchSockets(opts, interval, count, stop.signal)) {
            if (o.json) process.stdout.write(`${JSON.stringify(json(s))}\n`);
            else if (live)
              process.stdout.write(
                `\x1b[H\x1b[2J${s.time}  (every ${o.watch}, Ctrl-C to stop)\n${formatSample(s)}`,
              );
            else process.stdout.write(`# ${s.time}\n${formatSample(s)}\n`);
          }
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      } catch (err) {
        if (err instanceof SysError && err.syscall !== 'recv')
          throw new EnvironmentError(`inspect: the kernel refused the sock_diag dump: ${err.message}`);
        throw err;
      }
    });
}
