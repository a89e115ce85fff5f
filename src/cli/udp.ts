// `sink udp` and `blast udp`: parse, call runUdpSink() or createUdpBlast(), print. JSON: one object per line with an `event`
// field (ready, interval, result), as the bench runner reads it.
import type { Command } from 'commander';
import { likelyCause, peerFailureText } from '../ends/peer-failure.js';
import { createUdpBlast, parseSendRate } from '../ends/udp-blast.js';
import { runUdpSink } from '../ends/udp-sink.js';
import { UsageError } from '../errors.js';
import { formatHostPort, type HostPort, parseListen, parseUnicastTo } from '../policy/address.js';
import { OPTIONS } from '../policy/option-registry.js';
import { printable } from '../policy/printable.js';
import { formatBitRate, formatDuration, formatSize } from '../policy/units.js';
import type { OffloadOption } from '../udp/offload.js';
import { declared } from './declared.js';
import { lineWriter } from './lines.js';
import { stopSignals } from './signals.js';

/** A JSON event line (the people's output of these commands is a table at the end instead). */
const event = lineWriter(true, () => '');

/** --gro / --gso (one of the declared choices, or true when given alone) as the library takes it. */
function offload(value: string | boolean): OffloadOption {
  return value === true || value === 'on' ? true : value === 'off' ? false : 'auto';
}

function printPairs(pairs: [string, string][]): void {
  const w = Math.max(...pairs.map(([k]) => k.length));
  process.stdout.write(`${pairs.map(([k, v]) => `${k.padEnd(w)}  ${printable(v)}`).join('\n')}\n`);
}

export function registerSinkUdp(sink: Command): void {
  sink
    .command('udp')
    .description('receive UDP datagrams and count every loss: kernel, userspace, truncated, sequence gaps')
    .requiredOption('--listen <[host:]port>', 'address to listen on (port 0: any)')
    .addOption(declared('receiver'))
    .addOption(declared('sockets'))
    .addOption(declared('batch', 'messages per recvmmsg'))
    .addOption(declared('slot'))
    .addOption(declared('coalesce'))
    .addOption(declared('receiverRcvbuf', undefined, true))
    .addOption(declared('onFull'))
    .addOption(declared('gro'))
    .addOption(declared('sinkDuration', undefined, true))
    .addOption(declared('idle', undefined, true))
    .addOption(declared('warmUp', undefined, true))
    .option('--json', 'JSON lines on stdout: ready, interval (each second), result')
    .action(async (o) => {
      const listen = parseListen(o.listen);
      // node:dgram reads each datagram into a buffer of its own size: a slot size means nothing to it
      if (o.receiver === 'dgram' && o.slot !== undefined)
        throw UsageError.conflict(
          '--receiver dgram',
          '--slot',
          'node:dgram has no slots: a datagram is read whole, whatever its size',
        );
      // SIGINT/SIGTERM end the run early: the end still prints its result, then exits 130 or 143
      const signals = stopSignals();
      // checked against the registry as they were parsed: milliseconds, as the library takes them
      const duration: number | undefined = o.duration;
      const idle: number | undefined = o.idle;
      const r = await runUdpSink(
        {
          listen,
          receiver: o.receiver,
          sockets: o.sockets,
          batch: o.batch,
          slot: o.slot,
          coalesce: o.coalesce,
          rcvbuf: o.rcvbuf,
          onFull: o.onFull,
          gro: o.receiver === 'dgram' ? false : offload(o.gro ?? OPTIONS.gro.default),
          duration,
          idle,
          warmUp: o.warmUp,
          signal: signals.signal,
          // set by `sockbuf serve` for its far ends: only the announced client counts, serve's caps hold
          farEnd: 'env',
        },
        {
          onReady: (info) => {
            if (o.json) event('ready', { ...info });
            // the ready line as sink tcp prints it: stdout, `listening on [HOST]:PORT`, then the detail
            else
              process.stdout.write(
                `listening on ${formatHostPort(info)} (${info.receiver}${info.gro ? '+gro' : ''}, rcvbuf ${formatSize(info.rcvbuf)})\n`,
              );
          },
          onInterval: (i) => {
            if (o.json) event('interval', { ...i });
          },
        },
      );
      if (r.stopped !== undefined) {
        process.exitCode = 1; // a far end that cut its test at one of serve's caps
        if (o.json) event('stopped', { reason: r.stopped });
        else process.stderr.write(`sink udp: stopped: ${printable(r.stopped)}\n`);
      }
      if (o.json) return event('result', { ...r });
      printPairs([
        ['receiver', `${r.receiver}${r.gro ? '+gro' : ''}`],
        ['received', `${r.received} datagrams, ${formatSize(r.bytes)} in ${formatDuration(r.seconds)}`],
        ['rate', `${Math.round(r.datagramsPerSecond)} datagrams/s`],
        ['batches', `${r.batches} (${r.packetsPerBatch.mean.toFixed(1)} per batch)`],
        [
          'lost',
          `${r.lost} (tail ${r.tailLost ?? 'unknown'}), reordered ${r.reordered}, duplicates ${r.duplicates}`,
        ],
        [
          'drops',
          `kernel ${r.kernelDrops} (${r.kernelDropsUnit}), userspace ${r.userspaceDrops}, truncated ${r.truncated}`,
        ],
        ['jitter', formatDuration(r.jitterUs / 1e6)],
        ['rcvbuf', formatSize(r.rcvbuf)],
      ]);
    });
}

/** Why a blast udp run measured nothing or sent into nothing, or undefined when it did its job. */
function blastProblem(
  r: { sent: number; sendErrors: number; sendErrorsByCode: Record<string, number> },
  rate: string,
  duration: string,
  to: HostPort,
): string | undefined {
  const refused = r.sendErrorsByCode.ECONNREFUSED ?? 0;
  if (r.sent === 0 && r.sendErrors === 0)
    return `no datagram was sent in --duration ${duration} (--rate ${rate} is too slow for it): nothing was measured`;
  // the receiver's (or the route's) doing: said with its address and the likely cause (peer-failure.ts)
  const codes = Object.keys(r.sendErrorsByCode);
  const ctx = { peer: 'receiver', at: to, doing: 'sending to' };
  if (r.sent === 0)
    return peerFailureText(
      `every send failed (${JSON.stringify(r.sendErrorsByCode)}), nothing was measured`,
      {
        ...ctx,
        cause: codes.length === 1 ? likelyCause(codes[0], 'receiver') : undefined,
      },
    );
  if (refused > 0)
    return peerFailureText(`${refused} sends were refused (ECONNREFUSED), so what was sent went nowhere`, {
      ...ctx,
      cause: likelyCause('ECONNREFUSED', 'receiver'),
    });
  return undefined;
}

export function registerBlastUdp(blast: Command): void {
  blast
    .command('udp')
    .description('send numbered, timestamped UDP datagrams at a rate (sendmmsg, or UDP_SEGMENT with --gso)')
    .requiredOption('--to <host:port>', 'where to send')
    .addOption(declared('rate'))
    .addOption(declared('blastSize'))
    .addOption(declared('duration'))
    .addOption(declared('flows'))
    .addOption(declared('blastBatch'))
    .addOption(declared('udpSndbuf', undefined, true))
    .addOption(declared('gso'))
    .option('--json', 'JSON lines on stdout: result')
    .action(async (o) => {
      const to = parseUnicastTo(o.to);
      const size: number = o.size;
      parseSendRate(o.rate, size, '--rate');
      const duration: number = o.duration;
      // SIGINT/SIGTERM end the run early: the end still prints its result, then exits 130 or 143
      const signals = stopSignals();
      const sender = await createUdpBlast({
        to,
        size,
        rate: o.rate,
        flows: o.flows,
        batch: o.batch,
        sndbuf: o.sndbuf,
        gso: offload(o.gso ?? OPTIONS.gso.default),
      });
      try {
        const r = await sender.run({ duration: duration * 1e3, signal: signals.signal });
        await sender.sendTrailer();
        // a run that measured nothing, or whose datagrams went nowhere, says why and exits 1
        const problem = blastProblem(r, o.rate, formatDuration(duration), to);
        if (problem) {
          process.stderr.write(`sockbuf: blast udp: ${printable(problem)}\n`);
          process.exitCode = 1;
        }
        if (o.json) return event('result', { to: formatHostPort(to), sndbuf: sender.sndbuf, ...r });
        printPairs([
          ['sent', `${r.sent} datagrams of ${r.size} B in ${formatDuration(r.seconds)}`],
          ['rate', `${Math.round(r.datagramsPerSecond)} datagrams/s, ${formatBitRate(r.bitsPerSecond)}`],
          ...(r.askedDatagramsPerSecond === undefined
            ? []
            : ([
                [
                  'asked',
                  `${Math.round(r.askedDatagramsPerSecond)} datagrams/s: ${r.paceKept ? 'kept' : 'NOT kept'} (${Math.round((100 * r.datagramsPerSecond) / r.askedDatagramsPerSecond)} % reached)`,
                ],
              ] as [string, string][])),
          ['send errors', `${r.sendErrors} ${JSON.stringify(r.sendErrorsByCode)}, blocked ${r.sendBlocked}`],
          ['gso', r.gso ? 'on' : `off${r.gsoFallback ? ` (${r.gsoFallback})` : ''}`],
        ]);
      } finally {
        sender.close();
      }
    });
}
