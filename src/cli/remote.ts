// `sockbuf remote SERVER -- sink tcp …`: run one end on a `sockbuf serve` host (runRemoteEnd).
import type { Command } from 'commander';
import { printable } from '../policy/printable.js';
import { resolveHost } from '../policy/resolve.js';
import { parseServer, runRemoteEnd } from '../serve/remote-end.js';
import { stopSignals } from './signals.js';

export function register(program: Command): void {
  program
    .command('remote')
    .description(
      'run a far end (sink tcp [--echo], sink udp) on a sockbuf serve host; its JSON lines are printed here',
    )
    .argument('<server>', 'HOST[:PORT] of sockbuf serve (port 5209 by default)')
    .argument('<command...>', 'the far end after --, e.g. -- sink tcp --reader adaptive')
    .option('--token <token>', 'the token serve was started with (or SOCKBUF_TOKEN)')
    .action(async (server: string, command: string[], o: { token?: string }) => {
      // a signal stops the test (the far end's results are still printed when they come in time)
      const at = parseServer(server, '<server>');
      // a name that does not resolve is said with the argument that carried it (exit 3)
      await resolveHost(at.host, { option: '<server>', value: server });
      const signals = stopSignals();
      try {
        const outcome = await runRemoteEnd({
          server: at,
          token: o.token ?? process.env.SOCKBUF_TOKEN,
          args: command,
          // lines from another host: no control character of theirs reaches this terminal
          print: (line) => process.stdout.write(`${printable(line)}\n`),
          warn: (line) => process.stderr.write(`${printable(line)}\n`),
          signal: signals.signal,
        });
        process.exitCode = typeof outcome === 'number' ? outcome : outcome === 'SIGTERM' ? 0 : 1;
      } catch (err) {
        // stopped before the far end answered: said, and the exit is the signal's
        if (signals.received === undefined) throw err;
        const why = err instanceof Error && err.message !== signals.received ? `: ${err.message}` : '';
        process.stderr.write(`sockbuf: remote: stopped by ${signals.received}${printable(why)}\n`);
      } finally {
        signals.dispose(); // after a signal: exit 130 or 143
      }
    });
}
