// `sockbuf exporter`: Prometheus metrics for the host's sockets on /metrics, and with --probe-allow a
// /probe endpoint that tests a target on Prometheus's schedule (startExporter).
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { alertRules, rulesYaml } from '../observe/alerts.js';
import { startExporter } from '../observe/exporter-server.js';
import { parseListen } from '../policy/address.js';
import { resolveSize } from '../policy/buffers.js';
import { printable } from '../policy/printable.js';
import { probeHandler } from '../serve/probe-http.js';
import { declared } from './declared.js';
import { stopSignals } from './signals.js';

interface Opts {
  listen: string;
  top: number;
  hostCounters: boolean;
  printRules?: boolean;
  runbookUrl?: string;
  probeAllow?: string;
  /** Milliseconds, as probeHandler takes them. */
  probeDuration: number;
  probeMaxDuration: number;
  probeMaxConcurrent: number;
  probeSndbuf: string;
  'web.config.file'?: string;
}

export function register(program: Command): void {
  program
    .command('exporter')
    .description("Prometheus exporter: node_exporter's host counters and the most buffer-limited sockets")
    .option(
      '--listen <[host:]port>',
      'where to serve /metrics (loopback unless told otherwise)',
      '127.0.0.1:9477',
    )
    .addOption(declared('top'))
    .option(
      '--no-host-counters',
      "leave out node_exporter's host series (node_netstat_*, node_softnet_*, node_sockstat_*) where it runs",
    )
    .option(
      '--web.config.file <file>',
      "TLS and basic authentication in exporter-toolkit's format, as node_exporter takes it (docs/fleet.md)",
    )
    .option('--print-rules', 'print the Prometheus alerting rules for these metrics (YAML) and exit')
    .option(
      '--runbook-url <url>',
      "with --print-rules: the page each alert's runbook_url points to (#alert-name added), where your copy of docs/runbooks.md is served",
    )
    .option(
      '--probe-allow <list>',
      'turn /probe?target=HOST:PORT&module=iperf3|sockbuf on for these targets: host names, addresses, CIDR ranges (comma-separated)',
    )
    .addOption(declared('probeDuration'))
    .addOption(declared('probeMaxDuration'))
    .addOption(declared('maxConcurrent'))
    .option(
      '--probe-sndbuf <auto|size>',
      "each probe's send buffer: 'auto' leaves autotuning on; a size pins it",
      'auto',
    )
    .action(async (o: Opts, cmd: Command) => {
      const url = o.runbookUrl;
      if (url !== undefined && !/^https?:\/\/[^\s#]+$/.test(url))
        throw UsageError.invalid('runbook-url', url, 'an http(s) URL without a #fragment');
      if (url !== undefined && !o.printRules)
        throw new UsageError('--runbook-url needs --print-rules (it only changes the rules file)', [
          '--runbook-url',
          '--print-rules',
        ]);
      if (o.printRules) {
        process.stdout.write(rulesYaml(alertRules(url)));
        return;
      }
      const listen = parseListen(o.listen, '--listen', '127.0.0.1');
      if (o.probeAllow === undefined) {
        const set = cmd.options.find(
          (x) => x.long?.startsWith('--probe-') && cmd.getOptionValueSource(x.attributeName()) === 'cli',
        );
        if (set)
          throw new UsageError(`${set.long} needs --probe-allow (/probe is off without it)`, [
            String(set.long),
            '--probe-allow',
          ]);
      }
      // an empty path is a mistake (an unset variable in a unit file), not "no web config"
      if (o['web.config.file'] === '')
        throw UsageError.invalid('web.config.file', '', 'the path of a web config file');
      const log = (line: string) => process.stderr.write(`sockbuf exporter: ${printable(line)}\n`);
      const exp = await startExporter({
        webConfigFile: o['web.config.file'],
        log,
        host: listen.host,
        port: listen.port,
        top: o.top,
        hostCounters: o.hostCounters,
        probe:
          o.probeAllow === undefined
            ? undefined
            : probeHandler({
                allow: o.probeAllow,
                duration: o.probeDuration,
                maxDuration: o.probeMaxDuration,
                maxConcurrent: o.probeMaxConcurrent,
                sndbuf: resolveSize(o.probeSndbuf, '--probe-sndbuf') ?? 'auto',
                // a sockbuf serve that asks for a token gets bench --remote's
                token: process.env.SOCKBUF_TOKEN,
                log,
              }),
      });
      // the ready line as every receiving end prints it (stdout); the log line with the URL stays on stderr
      const u = new URL(exp.url);
      process.stdout.write(`listening on ${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}\n`);
      process.stderr.write(
        `sockbuf exporter: serving ${exp.url}${o.probeAllow === undefined ? '' : ` and /probe for ${o.probeAllow}`}\n`,
      );
      let signals: ReturnType<typeof stopSignals> | undefined;
      await new Promise<void>((resolve) => {
        signals = stopSignals(() => void exp.close().then(resolve, resolve));
      });
      signals?.dispose(); // exit 130 or 143
    });
}
