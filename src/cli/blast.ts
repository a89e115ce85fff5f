// `sockbuf blast <proto>`: one sending end of a test (like iperf3 -c). tcp here; udp registers beside it.
import type { Command } from 'commander';
import { runTcpBlast } from '../ends/tcp-source.js';
import { parseUnicastTo } from '../policy/address.js';
import { resolveSize } from '../policy/buffers.js';
import { printable } from '../policy/printable.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { declared } from './declared.js';
import { blastIperf3 } from './iperf3.js';
import { lineWriter } from './lines.js';
import { stopSignals } from './signals.js';
import { registerBlastUdp } from './udp.js';

export function register(program: Command): Command {
  const blast = program.command('blast').description('one sending end of a test (like iperf3 -c)');
  blast
    .command('tcp')
    .description("send a verifiable framed stream to a 'sink tcp' (--raw: plain zeros to any receiver)")
    .requiredOption('--to <host:port>', 'the sink')
    .addOption(declared('bytes', undefined, true))
    .addOption(declared('duration', 'send for this long (instead of --bytes)', true))
    .addOption(declared('stallTimeout'))
    .addOption(declared('frameSize'))
    .option('--sndbuf <auto|size>', "send buffer: 'auto' leaves autotuning on; a size pins it", 'auto')
    .addOption(declared('writeHwm', undefined, true))
    .addOption(declared('parallel', 'streams'))
    .option('--reverse', 'the sink sends, this end receives (and verifies what arrives)')
    .option('--raw', 'send zeros with no hello and no framing, for any receiver (nc, your application)')
    .addOption(declared('interval'))
    .option('--json', 'one JSON object per line on stdout')
    .option(
      '--iperf3',
      "test against a stock 'iperf3 -s' (TCP; --duration, --parallel, --reverse, --size, --sndbuf)",
    )
    .action(async (o: Record<string, string | number | boolean | undefined>) => {
      if (o.iperf3) return blastIperf3(o);
      const to = parseUnicastTo(String(o.to), '--to');
      const bytes = o.bytes as number | undefined;
      const seconds = o.duration as number | undefined;
      const stallSeconds = Number(o.stallTimeout);
      const size = Number(o.size);
      const sndbuf = resolveSize(String(o.sndbuf), '--sndbuf');
      const writableHighWaterMark = o.writeHwm as number | undefined;
      const interval = Number(o.interval);
      const out = lineWriter(Boolean(o.json), human);
      const signals = stopSignals();
      const result = await runTcpBlast(
        {
          host: to.host,
          port: to.port,
          bytes,
          seconds,
          size,
          sndbuf,
          writableHighWaterMark,
          parallel: Number(o.parallel),
          reverse: Boolean(o.reverse),
          raw: Boolean(o.raw),
          intervalSeconds: interval,
          // a serve test's far end wants its secret; from the environment, never argv
          secret: process.env.SOCKBUF_SECRET || undefined,
          stop: signals.signal,
          stallSeconds,
        },
        out,
      ).finally(() => signals.dispose());
      out('result', result);
      // reverse: what arrived was verified; a mismatch or a stream cut short is a problem found
      if (Number(result.mismatches ?? 0) > 0 || Number(result.errors ?? 0) > 0) process.exitCode = 1;
      // a receiver that never accepted, stopped reading or never closed: the run did not complete
      if (result.stalled !== undefined) {
        process.stderr.write(`sockbuf: blast tcp: ${result.stalled}\n`);
        process.exitCode = 1;
      }
      // the sink reset, closed or refused: what was moved until then is above, the failure here
      if (result.failed !== undefined) {
        process.stderr.write(`sockbuf: blast tcp: ${printable(result.failed)}\n`);
        process.exitCode = 1;
      }
      signals.dispose(); // after a signal: exit 130 or 143
    });
  registerBlastUdp(blast);
  return blast;
}

function human(event: string, f: Record<string, unknown>): string {
  const n = (k: string) => Number(f[k] ?? 0);
  const rate = formatBitRate(n('bytesPerSecond') * 8);
  if (event === 'interval') return `${formatDuration(n('seconds'))}  ${formatSize(n('bytes'))}  ${rate}`;
  const cut = f.interrupted
    ? `; stopped by ${f.interrupted}`
    : f.stalled
      ? `; stalled: ${f.stalled}`
      : f.failed
        ? '; cut short by the sink (below)'
        : '';
  return `${f.reverse ? 'received' : 'sent'} ${formatSize(n('bytes'))} in ${formatDuration(n('seconds'))} = ${rate} over ${f.streams} stream(s)${cut}`;
}
