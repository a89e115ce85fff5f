// `blast tcp --iperf3` and `sink tcp --iperf3`: iperf3's peers (src/ends/iperf3). Parsing and printing
// only; blast.ts and sink.ts hand over to these when --iperf3 is given.

import { runIperf3Blast } from '../ends/iperf3/iperf3-blast.js';
import { Iperf3Sink } from '../ends/iperf3/iperf3-sink.js';
import { UsageError } from '../errors.js';
import { formatHostPort, parseListen, parseUnicastTo } from '../policy/address.js';
import { resolveSize } from '../policy/buffers.js';
import { checkOption, OPTIONS } from '../policy/option-registry.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import { parseReader } from '../tcp/reader.js';
import { lineWriter } from './lines.js';
import { stopSignals } from './signals.js';

type Opts = Record<string, string | number | boolean | undefined>;

export async function blastIperf3(o: Opts): Promise<void> {
  for (const k of ['bytes', 'raw'] as const)
    if (o[k] !== undefined)
      throw new UsageError(`--${k} cannot be combined with --iperf3 (a test runs for --duration)`, [
        `--${k}`,
        '--iperf3',
      ]);
  const to = parseUnicastTo(String(o.to), '--to');
  const seconds = checkOption('duration', o.duration ?? OPTIONS.duration.default, '--duration');
  const size = Number(o.size);
  const out = lineWriter(Boolean(o.json), human);
  // what was measured, from the intervals (the last, partial one included): said if a signal stops the test
  const seen = { bytes: 0, seconds: 0 };
  const emit: typeof out = (event, f) => {
    if (event === 'interval') {
      seen.bytes += Number((f as { bytes?: number }).bytes ?? 0);
      seen.seconds = Number((f as { seconds?: number }).seconds ?? 0);
    }
    out(event, f);
  };
  const signals = stopSignals();
  const result = await runIperf3Blast(
    {
      host: to.host,
      port: to.port,
      seconds,
      size,
      sndbuf: resolveSize(String(o.sndbuf), '--sndbuf') ?? 'auto',
      parallel: Number(o.parallel),
      reverse: Boolean(o.reverse),
      intervalSeconds: Number(o.interval),
      signal: signals.signal,
    },
    emit,
  ).catch((err) => {
    if (signals.received === undefined) throw err;
    return undefined; // stopped by a signal: the iperf3 server's figures never came
  });
  if (result) out('result', result);
  else
    out('interrupted', {
      iperf3: true,
      interrupted: signals.received,
      reverse: Boolean(o.reverse),
      streams: Number(o.parallel),
      bytes: seen.bytes,
      seconds: seen.seconds,
      bytesPerSecond: seen.seconds > 0 ? seen.bytes / seen.seconds : 0,
    });
  signals.dispose(); // after a signal: exit 130 or 143
}

const pct = (v: unknown) => (typeof v === 'number' ? `${v.toFixed(1)} %` : 'n/a');
const n = (f: Record<string, unknown>, k: string) => Number(f[k] ?? 0);
const rate = (f: Record<string, unknown>) => formatBitRate(n(f, 'bytesPerSecond') * 8);

/** One stream's end as a line: what iperf3 does not print. */
function streamLine(s: Record<string, unknown>): string {
  const b = s.buffers as { sndbuf?: { requested: unknown }; rcvbuf?: { requested: unknown } } | undefined;
  const policy = (x?: { requested: unknown }, ceilingBits?: unknown) =>
    !x || x.requested === 'auto'
      ? 'auto'
      : `pinned ${formatSize(Number(x.requested))}${typeof ceilingBits === 'number' ? `: ceiling ≈ ${formatBitRate(ceilingBits)} at this RTT` : ''}`;
  return (
    `  [${s.id ?? s.stream}] ` +
    (s.rwndLimitedPct === undefined
      ? ''
      : `rwnd-limited ${pct(s.rwndLimitedPct)}, sndbuf-limited ${pct(s.sndbufLimitedPct)}, `) +
    `cwnd ${formatSize(n(s, 'cwndBytes'))}, rtt ${(n(s, 'rttUs') / 1000).toFixed(2)} ms, ` +
    `wscale ${s.sndWscale ?? '-'}/${s.rcvWscale ?? '-'}, sndbuf ${formatSize(n(s, 'sndbufBytes'))} (${policy(b?.sndbuf, s.sndbufCeilingBitsPerSecond)}), ` +
    `rcvbuf ${formatSize(n(s, 'rcvbufBytes'))} (${policy(b?.rcvbuf, s.rcvbufCeilingBitsPerSecond)})`
  );
}

function human(event: string, f: Record<string, unknown>): string {
  if (event === 'interrupted')
    return `${f.reverse ? 'received' : 'sent'} ${formatSize(n(f, 'bytes'))} in ${formatDuration(n(f, 'seconds'))} = ${rate(f)} over ${f.streams} stream(s); interrupted by ${f.interrupted} before the iperf3 server reported its figures`;
  if (event === 'interval')
    return `${formatDuration(n(f, 'seconds'))}  ${formatSize(n(f, 'bytes'))}  ${rate(f)}${f.rwndLimitedPct === undefined ? '' : `  rwnd-limited ${pct(f.rwndLimitedPct)}, sndbuf-limited ${pct(f.sndbufLimitedPct)}`}`;
  const server = (f.server ?? {}) as Record<string, unknown>;
  const lines = [
    `${f.reverse ? 'received' : 'sent'} ${formatSize(n(f, 'bytes'))} in ${formatDuration(n(f, 'seconds'))} = ${rate(f)} over ${f.streams} stream(s)` +
      (f.reverse ? '' : `; rwnd-limited ${pct(f.rwndLimitedPct)}, sndbuf-limited ${pct(f.sndbufLimitedPct)}`),
    `iperf3 server ${server.host}: ${f.reverse ? 'sent' : 'received'} ${formatSize(n(server, 'bytes'))} = ${rate(server)}` +
      `${f.reverse ? `, ${n(server, 'retransmits')} retransmits` : ''}${server.window ? `, -w ${formatSize(n(server, 'window'))} (its buffers pinned)` : ''}`,
    ...((f.perStream ?? []) as Record<string, unknown>[]).map(streamLine),
  ];
  return lines.join('\n');
}

export async function sinkIperf3(o: Opts): Promise<void> {
  for (const k of ['echo', 'verify'] as const)
    if (o[k] !== undefined)
      throw new UsageError(`--${k} cannot be combined with --iperf3`, [`--${k}`, '--iperf3']);
  const listen = parseListen(String(o.listen), '--listen');
  const out = lineWriter(Boolean(o.json), sinkHuman);
  const sink = await Iperf3Sink.start(
    {
      host: listen.host,
      port: listen.port,
      reader: parseReader(String(o.reader), '--reader'),
      rcvbuf: resolveSize(String(o.rcvbuf), '--rcvbuf'),
      sndbuf: resolveSize(String(o.sndbuf), '--sndbuf'),
      once: Boolean(o.once),
      intervalSeconds: Number(o.interval),
    },
    out,
  );
  // the handlers first: a peer may signal as soon as it reads the ready line
  const signals = stopSignals(() => void sink.stop(true));
  out('ready', {
    host: sink.server.host,
    port: sink.server.port,
    iperf3: true,
    buffers: sink.server.buffers,
  });
  const result = await sink.done;
  out('result', result);
  if (Number(result.errors) > 0) process.exitCode = 1;
  signals.dispose(); // after a signal: exit 130 or 143
}

function sinkHuman(event: string, f: Record<string, unknown>): string {
  switch (event) {
    case 'ready':
      return `listening on ${formatHostPort({ host: String(f.host), port: n(f, 'port') })} for iperf3 clients`;
    case 'interval':
      return `[${f.stream}] ${formatDuration(n(f, 'seconds'))}  ${formatSize(n(f, 'bytes'))}  ${rate(f)}  ${n(f, 'reads')} reads, buffer ${formatSize(n(f, 'readerSizeBytes'))}`;
    case 'refused':
      return `[conn ${f.conn}] refused: ${f.reason}`;
    case 'connection':
      return `${streamLine(f)}\n      ${formatSize(n(f, 'bytes'))} received, ${formatSize(n(f, 'sentBytes'))} sent, ${n(f, 'reads')} reads, mean ${formatSize(Math.round(n(f, 'meanReadBytes')))}${f.error ? `; error: ${f.error}` : ''}`;
    case 'test': {
      if (f.error) return `test ended in error: ${f.error}`;
      if (f.interrupted)
        return `iperf3 test interrupted: ${f.reverse ? 'sent' : 'received'} ${formatSize(n(f, f.reverse ? 'sentBytes' : 'bytes'))} in ${formatDuration(n(f, 'seconds'))} = ${rate(f)} over ${f.streams} stream(s) until then`;
      const c = (f.client ?? {}) as Record<string, unknown>;
      return (
        `iperf3 test: ${f.reverse ? 'sent' : 'received'} ${formatSize(n(f, f.reverse ? 'sentBytes' : 'bytes'))} in ${formatDuration(n(f, 'seconds'))} = ${rate(f)} over ${f.streams} stream(s); ` +
        `client ${f.reverse ? 'received' : 'sent'} ${formatSize(n(c, 'bytes'))}; ` +
        (f.pinned
          ? `-w ${formatSize(n(f, 'window'))} pinned this end's buffers (autotuning off)`
          : 'buffers autotuned (no -w)') +
        (f.reverse
          ? `; rwnd-limited ${pct(f.rwndLimitedPct)}, sndbuf-limited ${pct(f.sndbufLimitedPct)}`
          : '')
      );
    }
    default:
      return `${event}: ${f.tests} test(s)${n(f, 'interrupted') ? ` (${f.interrupted} interrupted)` : ''}, ${formatSize(n(f, 'bytes'))} received, ${formatSize(n(f, 'sentBytes'))} sent, ${f.errors} error(s)`;
  }
}
