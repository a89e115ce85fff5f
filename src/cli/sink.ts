// `sockbuf sink <proto>`: one receiving end of a test (like iperf3 -s). tcp here; udp registers beside it.
import type { Command } from 'commander';
import { startTcpSink } from '../ends/tcp-sink.js';
import { formatHostPort, parseListen } from '../policy/address.js';
import { resolveSize } from '../policy/buffers.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { parseReader } from '../tcp/reader.js';
import { declared } from './declared.js';
import { sinkIperf3 } from './iperf3.js';
import { lineWriter } from './lines.js';
import { stopSignals } from './signals.js';
import { registerSinkUdp } from './udp.js';

export function register(program: Command): Command {
  const sink = program.command('sink').description('one receiving end of a test (like iperf3 -s)');
  sink
    .command('tcp')
    .description('accept TCP connections and drain them through a reader; report per connection')
    .option('--listen <[host:]port>', 'where to listen', '5201')
    .option(
      '--reader <reader>',
      'adaptive | adaptive:min=SIZE,max=SIZE,poll=DURATION | fixed:SIZE | data',
      'adaptive',
    )
    .option('--rcvbuf <auto|size>', "receive buffer: 'auto' leaves autotuning on; a size pins it", 'auto')
    .option('--sndbuf <auto|size>', 'send buffer (what --echo and reverse tests send through)', 'auto')
    .addOption(declared('writeHwm', undefined, true))
    .option('--echo', 'answer every frame with the same frame (the far end of bench ping)')
    .option('--once', 'exit after the first test (all streams of one blast) has ended')
    .option(
      '--verify',
      "decode frames and check blast's byte pattern: exit 1 on a mismatch, an error or a connection it cannot check (a plain stream)",
    )
    .addOption(declared('interval'))
    .option('--json', 'one JSON object per line on stdout')
    .option('--iperf3', "answer a stock 'iperf3 -c' (TCP, -R, -P, -w) instead of blast")
    .action(async (o: Record<string, string | number | boolean | undefined>) => {
      if (o.iperf3) return sinkIperf3(o);
      const listen = parseListen(String(o.listen), '--listen');
      const reader = parseReader(String(o.reader), '--reader');
      const rcvbuf = resolveSize(String(o.rcvbuf), '--rcvbuf');
      const sndbuf = resolveSize(String(o.sndbuf), '--sndbuf');
      const writableHighWaterMark = o.writeHwm as number | undefined;
      const interval = Number(o.interval);
      const out = lineWriter(Boolean(o.json), human);
      const sink = await startTcpSink(
        {
          host: listen.host,
          port: listen.port,
          reader,
          rcvbuf,
          sndbuf,
          writableHighWaterMark,
          echo: Boolean(o.echo),
          verify: Boolean(o.verify),
          once: Boolean(o.once),
          intervalSeconds: interval,
          // set by `sockbuf serve` for the far ends it starts (the secret never goes on argv)
          farEnd: 'env',
        },
        out,
      );
      // the handlers first: a peer may signal as soon as it reads the ready line; a signal closes the
      // connections in progress at once (each reported with what it had)
      const signals = stopSignals((sig) => void sink.stop(sig));
      out('ready', { host: sink.server.host, port: sink.server.port, buffers: sink.server.buffers });
      const result = await sink.done;
      out('result', result);
      // with --verify, a mismatch, a connection that ended in error or one whose bytes could not be
      // checked (a plain stream: nothing was verified) is a problem found
      if (
        o.verify &&
        (Number(result.mismatches) > 0 || Number(result.errors) > 0 || Number(result.unverified) > 0)
      )
        process.exitCode = 1;
      // a far end that cut its test at one of serve's caps
      if (result.stopped !== undefined) process.exitCode = 1;
      signals.dispose(); // after a signal: exit 130 or 143
    });
  registerSinkUdp(sink);
  return sink;
}

function human(event: string, f: Record<string, unknown>): string {
  const n = (k: string) => Number(f[k] ?? 0);
  const rate = formatBitRate(n('bytesPerSecond') * 8);
  switch (event) {
    case 'ready':
      return `listening on ${formatHostPort({ host: String(f.host), port: n('port') })}`;
    case 'interval':
      if (f.conn === undefined) return `${n('idleConnections')} idle connections`;
      return `[conn ${f.conn}] ${formatDuration(n('seconds'))}  ${formatSize(n('bytes'))}  ${rate}  ${n('reads')} reads, mean ${formatSize(Math.round(n('meanReadBytes')))}, buffer ${formatSize(n('readerSizeBytes'))}`;
    case 'stopped':
      return `stopped: ${f.reason}`;
    case 'refused':
      return `[conn ${f.conn}] refused: ${f.reason}`;
    case 'connection':
      return `[conn ${f.conn}]${f.plain ? ' plain stream' : ''} ended: ${formatSize(n('bytes'))} in ${formatDuration(n('seconds'))} = ${rate}, ${n('reads')} reads, mean ${formatSize(Math.round(n('meanReadBytes')))}${f.mismatches !== undefined ? `, ${f.frames} frames, ${f.mismatches} mismatches` : ''}${f.unverified ? `; not verified: ${f.unverified}` : ''}${f.error ? `; error: ${f.error}` : ''}${f.interrupted ? `; cut by ${f.interrupted}` : ''}`;
    default:
      return `${event}: ${f.connections} connections, ${formatSize(n('bytes'))} in ${formatDuration(n('seconds'))} = ${rate}${f.mismatches !== undefined ? `, ${f.frames} frames verified, ${f.mismatches} mismatches` : ''}${n('unverified') ? `, ${n('unverified')} ${n('unverified') === 1 ? 'connection' : 'connections'} NOT verified` : ''}${n('errors') ? `, ${n('errors')} ended in error` : ''}${f.interrupted ? `; stopped by ${f.interrupted} (${n('interruptedConnections')} cut)` : ''}`;
  }
}
