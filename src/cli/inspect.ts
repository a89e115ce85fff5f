// `sockbuf inspect`: every TCP and UDP socket of the host through sock_diag, with the buffer-limited
// ones flagged. Parses options, calls inspectSockets() or watchSockets(), prints.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { type InspectOptions, inspectSockets, SOCKET_STATES, watchSockets } from '../observe/inspect.js';
import { formatInspectSample, inspectDocument } from '../observe/inspect-format.js';
import { formatDuration } from '../policy/units.js';
import { declared } from './declared.js';
import { stopSignals } from './signals.js';

export function register(program: Command): void {
  program
    .command('inspect')
    .description(
      'every TCP and UDP socket on the host (sock_diag, like ss), with buffer-limited ones flagged',
    )
    .addOption(declared('port'))
    .addOption(declared('pid'))
    .option('--state <name>', `only sockets in this state (${SOCKET_STATES.join(', ')})`)
    .option('--tcp', 'TCP sockets only')
    .option('--udp', 'UDP sockets only')
    .option('--limited', 'only sockets flagged as buffer-limited')
    .addOption(declared('watch'))
    .addOption(declared('count'))
    .option('--json', 'JSON on stdout (one line per sample with --watch)')
    .action(async (o: Record<string, string | number | boolean | undefined>) => {
      const opts: InspectOptions = {
        port: o.port === undefined ? undefined : Number(o.port),
        pid: o.pid === undefined ? undefined : Number(o.pid),
        state: o.state === undefined ? undefined : String(o.state),
        limitedOnly: o.limited === true,
        protocols: o.tcp && !o.udp ? ['tcp'] : o.udp && !o.tcp ? ['udp'] : ['tcp', 'udp'],
      };
      const interval = o.watch === undefined ? undefined : Number(o.watch);
      if (o.count !== undefined && interval === undefined)
        throw new UsageError(`--count '${o.count}' needs --watch`, ['--count', '--watch'], {
          value: String(o.count),
        });
      const count = o.count === undefined ? undefined : Number(o.count);
      if (interval === undefined) {
        const s = inspectSockets(opts);
        process.stdout.write(
          o.json ? `${JSON.stringify(inspectDocument(s), null, 2)}\n` : formatInspectSample(s),
        );
        return;
      }
      const signals = stopSignals();
      const live = !o.json && process.stdout.isTTY === true;
      try {
        for await (const s of watchSockets(opts, interval, count, signals.signal)) {
          if (o.json) process.stdout.write(`${JSON.stringify(inspectDocument(s))}\n`);
          else if (live)
            process.stdout.write(
              `\x1b[H\x1b[2J${s.time}  (every ${formatDuration(Number(o.watch))}, Ctrl-C to stop)\n${formatInspectSample(s)}`,
            );
          else process.stdout.write(`# ${s.time}\n${formatInspectSample(s)}\n`);
        }
      } finally {
        signals.dispose(); // after a signal: exit 130 or 143
      }
    });
}
