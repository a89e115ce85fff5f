// `sockbuf serve`: the remote end for benchmarks (see src/serve/server.ts).
import type { Command } from 'commander';
import { EnvironmentError, UsageError } from '../errors.js';
import { formatHostPort, parseListen } from '../policy/address.js';
import { printable } from '../policy/printable.js';
import { DEFAULT_SERVE_PORT } from '../serve/protocol.js';
import { startServer } from '../serve/server.js';
import { declared } from './declared.js';
import { stopSignals } from './signals.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description(
      'the remote end for benchmarks (like iperf3 -s): one test at a time, over a JSON-lines control connection',
    )
    .option(
      '--listen <[host:]port>',
      'control address (loopback unless told otherwise)',
      `127.0.0.1:${DEFAULT_SERVE_PORT}`,
    )
    .addOption(declared('maxDuration'))
    .addOption(declared('maxBytes'))
    .option('--token <token>', 'required of every test request when set')
    .addOption(declared('idleTimeout'))
    .addOption(declared('maxPerClient'))
    .option('--json', 'print a ready line and a line per event as JSON on stdout')
    .action(async (o: Record<string, string | number | boolean | undefined>) => {
      const listen = parseListen(String(o.listen), '--listen', '127.0.0.1');
      const maxDurationSeconds = Number(o.maxDuration);
      const idleSeconds = Number(o.idleTimeout);
      const maxBytes = Number(o.maxBytes);
      const maxPerClient = Number(o.maxPerClient);
      const token = typeof o.token === 'string' ? o.token : undefined;
      const json = o.json === true;
      const log = (line: string) => {
        if (json) process.stdout.write(`${JSON.stringify({ event: 'log', message: line })}\n`);
        else process.stderr.write(`sockbuf serve: ${printable(line)}\n`);
      };
      let handle: Awaited<ReturnType<typeof startServer>>;
      try {
        handle = await startServer({
          listen,
          maxDurationSeconds,
          maxBytes,
          token,
          idleSeconds,
          maxPerClient,
          log,
        });
      } catch (err) {
        // startServer checks its limits (maxDurationSeconds → --max-duration, see main.ts)
        if (err instanceof UsageError) throw err;
        const code = (err as NodeJS.ErrnoException).code;
        throw new EnvironmentError(
          `cannot listen on ${formatHostPort(listen)} (--listen): ${code ?? (err as Error).message}`,
        );
      }
      // the handlers are in place before the ready line: a peer may signal as soon as it reads it
      let signals: ReturnType<typeof stopSignals> | undefined;
      const stopped = new Promise<void>((resolve) => {
        signals = stopSignals(() => void handle.close().then(resolve, resolve));
      });
      if (json) process.stdout.write(`${JSON.stringify({ event: 'ready', ...handle.address })}\n`);
      else process.stdout.write(`listening on ${formatHostPort(handle.address)}\n`); // as every receiving end
      await stopped;
      signals?.dispose(); // exit 130 or 143
    });
}
