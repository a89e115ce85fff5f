// `sockbuf exporter`: Prometheus metrics for the host's sockets on /metrics (startExporter).
import type { Command } from 'commander';
import { parseCount, parseListen, rulesYaml, startExporter } from '../tools.js';

export function register(program: Command): void {
  program
    .command('exporter')
    .description("Prometheus exporter: node_exporter's host counters and the most buffer-limited sockets")
    .option(
      '--listen <[host:]port>',
      'where to serve /metrics (loopback unless told otherwise)',
      '127.0.0.1:9477',
    )
    .option('--top <n>', 'per-socket series for at most this many sockets (flagged first)', '20')
    .option(
      '--no-host-counters',
      "leave out node_exporter's host series (node_netstat_*, node_softnet_*, node_sockstat_*) where it runs",
    )
    .option('--print-rules', 'print the Prometheus alerting rules for these metrics (YAML) and exit')
    .action(async (o: { listen: string; top: string; hostCounters: boolean; printRules?: boolean }) => {
      if (o.printRules) {
        process.stdout.write(rulesYaml());
        return;
      }
      const listen = parseListen(o.listen, '--listen', '127.0.0.1');
      const top = parseCount(o.top, '--top', 0, 10000);
      const exp = await startExporter({
        host: listen.host,
        port: listen.port,
        top,
        hostCounters: o.hostCounters,
      });
      process.stderr.write(`sockbuf exporter: serving ${exp.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          exp.close().then(resolve, resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
