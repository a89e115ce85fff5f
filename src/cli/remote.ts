// `sockbuf remote SERVER -- sink tcp …`: run one end on a `sockbuf serve` host (runRemoteEnd).
import type { Command } from 'commander';
import { printable } from '../policy/printable.js';
import { parseServer, runRemoteEnd } from '../serve/remote-end.js';

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
      const ac = new AbortController();
      const stop = () => ac.abort();
      // `on`, not `once`: a signal arriving again must not fall through to the default (death)
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      try {
        const outcome = await runRemoteEnd({
          server: parseServer(server, '<server>'),
          token: o.token ?? process.env.SOCKBUF_TOKEN,
          args: command,
          // lines from another host: no control character of theirs reaches this terminal
          print: (line) => process.stdout.write(`${printable(line)}\n`),
          warn: (line) => process.stderr.write(`${printable(line)}\n`),
          signal: ac.signal,
        });
        process.exitCode = typeof outcome === 'number' ? outcome : outcome === 'SIGTERM' ? 0 : 1;
      } finally {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
      }
    });
}
