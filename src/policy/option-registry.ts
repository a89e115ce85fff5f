// The option registry: each option declared once (its kind, range, default, unit, CLI flag, serve's
// wire name, a doc line). The library checks its options against it, the CLI makes its commander options
// from it (src/cli/declared.ts), serve bounds its wire with it, and docs/cli/options.md is generated
// from it (npm run docs:cli). Pure: no I/O.
import { UsageError } from '../errors.js';
import {
  formatBitRate,
  formatDuration,
  formatSize,
  parseBitRate,
  parseDuration,
  parseSize,
} from './units.js';

/** What an option's value is: how it is parsed and said. */
export type OptionKind =
  | 'count' // a whole number within [min, max]
  | 'size' // bytes: 8192, 256K, 2MiB, 2MB
  | 'duration' // 250us, 2ms, 1.5s, 1m
  | 'bitRate' // bits per second: 10gbit, 500mbit, 1.2GB/s
  | 'rate' // blast udp's pace: datagrams/s, a payload bit rate or 'max' (parsed with the datagram size)
  | 'choice'; // one of `choices`

export interface OptionDecl {
  readonly kind: OptionKind;
  /** On the command line. */
  readonly flag: `--${string}`;
  /** The value's name in --help: `--sockets <n>`. */
  readonly arg: string;
  /** The value may be left out (`--gro` alone is `--gro auto`'s `true`). */
  readonly optionalValue?: boolean;
  /** The least value, in the base unit: bytes, seconds, bit/s (a count: the least whole number). */
  readonly min?: number;
  /** The value must be more than this (a duration or a rate: more than 0). */
  readonly above?: number;
  /** The most, in the base unit. */
  readonly max?: number;
  /** 0 is taken too, below `min`, and means this (lab --rtt 0: no delay line). */
  readonly zero?: string;
  /** The value when none is given, where there is one, as a user writes it ('10s', '128K', 64). */
  readonly default?: number | string;
  readonly choices?: readonly string[];
  /**
   * The unit of the number the library takes and checkOption() returns: 'bytes', 's', 'ms' or
   * 'bit/s' (a duration given in 'ms' is still bounded and said in seconds).
   */
  readonly unit?: string;
  /** The parameter's name on serve's wire, where a far end takes it. */
  readonly wire?: string;
  /** Where it appears (commands, library options). */
  readonly where: string;
  /** One line for --help and the docs. */
  readonly doc: string;
}

/** Datagrams per recvmmsg/sendmmsg call: the kernel's UIO_MAXIOV is 1024. */
const PER_CALL = { min: 1, max: 1024 } as const;

/** The most sockets in one SO_REUSEPORT group a receiver opens. */
const REUSEPORT_SOCKETS = { min: 1, max: 64 } as const;

/**
 * A socket buffer size that is asked for (SO_RCVBUF/SO_SNDBUF take an int): 1 B to 2 GiB − 1. The
 * kernel clamps it further to rmem_max/wmem_max, and sockbuf reports that clamp.
 */
export const BUFFER_BYTES = { min: 1, max: 0x7fffffff, expected: '1 B to 2 GiB' } as const;
const BUFFER = { min: BUFFER_BYTES.min, max: BUFFER_BYTES.max } as const;

/** The largest UDP payload over IPv4 (65535 − 20 − 8); a GSO message must not exceed it in total. */
export const MAX_DATAGRAM = 65_507;

/** The UDP receive buffer a receiver asks for, and doctor's target for one (8 MiB, as getsockopt reports it). */
const UDP_RCVBUF = '8MiB';

/** An hour, in seconds: the most a warm-up, a report interval or a stall wait could be meant to last. */
const AN_HOUR = 3600;

/** A day, in seconds: the longest test or run (serve's --max-duration has always stopped there). */
const LONGEST_TEST = 86_400;

/** The fastest links carry a few Tbit/s: 10 Tbit/s bounds every bit rate (doctor's, lab's, blast's). */
const FASTEST_LINK = 10e12;

/** A pebibyte: more bytes than any one test moves (a day at 10 Gbit/s is 108 TB). */
const MOST_BYTES = 2 ** 50;

/** A probe's time: more than 0, at most an hour. */
const PROBE_TIME = { above: 0, max: AN_HOUR, unit: 'ms' } as const;

export const OPTIONS = {
  parallel: {
    kind: 'count',
    flag: '--parallel',
    arg: 'n',
    min: 1,
    // iperf3 -P takes up to 128
    max: 128,
    default: 1,
    wire: 'parallel',
    where: 'blast tcp, runTcpBlast, runIperf3Blast, serve',
    doc: 'TCP streams of one test',
  },
  batch: {
    kind: 'count',
    flag: '--batch',
    arg: 'n',
    ...PER_CALL,
    default: 64,
    wire: 'batch',
    where: 'sink udp, createUdpReceiver, runUdpSink, createUdpSender, serve',
    doc: 'messages per recvmmsg (or sendmmsg) call',
  },
  blastBatch: {
    kind: 'count',
    flag: '--batch',
    arg: 'n',
    ...PER_CALL,
    // blast udp's own, smaller bursts between its pacing sleeps (its benchmarks were measured with it)
    default: 32,
    where: 'blast udp, createUdpBlast',
    doc: 'messages per sendmmsg (with --gso a message carries up to 64 datagrams)',
  },
  flows: {
    kind: 'count',
    flag: '--flows',
    arg: 'n',
    min: 1,
    // the sink tracks sequence numbers per flow: 1024 flows at most
    max: 1024,
    default: 1,
    wire: 'flows',
    where: 'blast udp, createUdpBlast, bench streamer, serve',
    doc: 'UDP flows (sockets with distinct source ports) of one sender',
  },
  sockets: {
    kind: 'count',
    flag: '--sockets',
    arg: 'n',
    ...REUSEPORT_SOCKETS,
    default: 1,
    wire: 'sockets',
    where: 'sink udp, createUdpReceiver, runUdpSink, bench streamer, serve',
    doc: 'UDP receive sockets sharing the port with SO_REUSEPORT (help only with many flows)',
  },
  ring: {
    kind: 'count',
    flag: '--ring',
    arg: 'n',
    min: 1,
    max: 4096,
    where: 'createUdpReceiver',
    doc: "batches in a UDP receiver's ring (default: at most 32 MiB of them, 4 to 256)",
  },
  inflight: {
    kind: 'count',
    flag: '--inflight',
    arg: 'n',
    min: 1,
    max: 4096,
    wire: 'inflight',
    where: 'bench ping, serve',
    doc: 'requests in flight of the framed ping',
  },
  repeat: {
    kind: 'count',
    flag: '--repeat',
    arg: 'n',
    min: 1,
    max: 1000,
    default: 3,
    where: 'bench <scenario>, bench (the quick suite: each entry its own), runBench',
    doc: 'runs of each point; the table shows medians',
  },
  maxPerClient: {
    kind: 'count',
    flag: '--max-per-client',
    arg: 'n',
    min: 1,
    max: 4096,
    default: 8,
    where: 'serve, startServer',
    doc: 'control connections open at once from one client address',
  },
  maxConcurrent: {
    kind: 'count',
    flag: '--probe-max-concurrent',
    arg: 'n',
    min: 1,
    max: 64,
    default: 2,
    where: 'exporter, probeHandler',
    doc: 'probes running at once, over all targets',
  },
  top: {
    kind: 'count',
    flag: '--top',
    arg: 'n',
    min: 0,
    max: 10_000,
    default: 20,
    where: 'exporter, startExporter',
    doc: 'per-socket series for at most this many sockets (flagged first)',
  },
  port: {
    kind: 'count',
    flag: '--port',
    arg: 'n',
    // 0 is "any" where a socket listens (--listen 0); a filter or a destination needs a real one
    min: 1,
    max: 65_535,
    where: 'inspect, every --to HOST:PORT and --listen [HOST:]PORT (where 0 is any)',
    doc: 'only sockets with this local or remote port',
  },
  pid: {
    kind: 'count',
    flag: '--pid',
    arg: 'n',
    min: 1,
    // the kernel's PID_MAX_LIMIT (4 Mi on 64-bit)
    max: 4_194_304,
    where: 'inspect',
    doc: 'only sockets owned by this process',
  },
  count: {
    kind: 'count',
    flag: '--count',
    arg: 'n',
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    where: 'inspect --watch',
    doc: 'with --watch: stop after this many samples',
  },
  mtu: {
    kind: 'count',
    flag: '--mtu',
    arg: 'bytes',
    // IPv4's minimum datagram every host must take, to the largest an IP packet can be
    min: 576,
    max: 65_535,
    default: 1500,
    unit: 'bytes',
    where: 'lab, lab up, bench --lab mtu=…',
    doc: 'MTU of the lab link',
  },
  threads: {
    kind: 'count',
    flag: '--threads',
    arg: 'n',
    min: 1,
    max: 2,
    default: 2,
    where: 'lab, lab up',
    doc: 'delay-line threads: 2 (one per direction) or 1',
  },
  steps: {
    kind: 'count',
    flag: '--steps',
    arg: 'n',
    min: 1,
    max: 20,
    default: 6,
    where: 'bench udp',
    doc: 'bisection steps below the full-speed run (--find-max)',
  },
  conns: {
    kind: 'count',
    flag: '--conns',
    arg: 'n',
    min: 1,
    // below the default file-descriptor limit's reach with both ends in one host
    max: 15_000,
    default: 10_000,
    where: 'bench idle',
    doc: 'idle connections',
  },
  coalesce: {
    kind: 'duration',
    flag: '--coalesce',
    arg: 'duration',
    // a batching window: longer would hold datagrams past any useful latency
    min: 0,
    max: 1,
    default: '1ms',
    unit: 'ms',
    wire: 'coalesce',
    where: 'sink udp, createUdpReceiver, serve',
    doc: 'fill a batch for up to this long',
  },
  blastSize: {
    kind: 'size',
    flag: '--size',
    arg: 'size',
    min: 1,
    max: MAX_DATAGRAM,
    default: 64,
    unit: 'bytes',
    where: 'blast udp, createUdpBlast',
    doc: 'payload bytes per datagram (24 or more to carry a sequence number)',
  },
  duration: {
    kind: 'duration',
    flag: '--duration',
    arg: 'duration',
    above: 0,
    // a day, as serve's --max-duration: a longer test is a typo (10000h), and would never end
    max: LONGEST_TEST,
    default: '10s',
    unit: 's',
    where: 'blast tcp, blast udp, runTcpBlast (seconds)',
    doc: 'send for this long',
  },
  interval: {
    kind: 'duration',
    flag: '--interval',
    arg: 'duration',
    // a report more often than every 10 ms would cost more than what it reports
    min: 0.01,
    // an hour: a report less often than that reports nothing a run of a day would miss
    max: AN_HOUR,
    default: '1s',
    unit: 's',
    wire: 'interval',
    where: 'blast tcp, sink tcp, runTcpBlast and runTcpSink (intervalSeconds), serve',
    doc: 'report every',
  },
  stallTimeout: {
    kind: 'duration',
    flag: '--stall-timeout',
    arg: 'duration',
    above: 0,
    max: AN_HOUR,
    default: '10s',
    unit: 's',
    where: 'blast tcp --bytes, runTcpBlast (stallSeconds)',
    doc: 'with --bytes: give up when the receiver has taken nothing for this long (connecting included)',
  },
  frameSize: {
    kind: 'size',
    flag: '--size',
    arg: 'size',
    // from a frame's index to the largest frame a sink decodes (runTcpBlast checks both)
    default: '128K',
    unit: 'bytes',
    where: 'blast tcp, runTcpBlast',
    doc: 'frame payload bytes',
  },
  rate: {
    kind: 'rate',
    flag: '--rate',
    arg: 'rate',
    // in bit/s of payload (a datagram rate times the datagram's bits), as doctor's --bandwidth
    max: FASTEST_LINK,
    default: 'max',
    where: 'blast udp, createUdpBlast',
    doc: "datagrams/s (100k), payload bit rate (500mbit), or 'max'",
  },
  maxDuration: {
    kind: 'duration',
    flag: '--max-duration',
    arg: 'duration',
    above: 0,
    max: LONGEST_TEST,
    default: '60s',
    unit: 's',
    where: 'serve, startServer (maxDurationSeconds)',
    doc: 'longest test accepted',
  },
  maxBytes: {
    kind: 'size',
    flag: '--max-bytes',
    arg: 'size',
    min: 1,
    max: MOST_BYTES,
    default: '64GiB',
    unit: 'bytes',
    where: 'serve, startServer',
    doc: 'most bytes one test may move',
  },
  idleTimeout: {
    kind: 'duration',
    flag: '--idle-timeout',
    arg: 'duration',
    above: 0,
    max: LONGEST_TEST,
    default: '10s',
    unit: 's',
    where: 'serve, startServer (idleSeconds)',
    doc: 'close a control connection that asks for no test this long',
  },
  bandwidth: {
    kind: 'bitRate',
    flag: '--bandwidth',
    arg: 'rate',
    above: 0,
    max: FASTEST_LINK,
    default: '10gbit',
    unit: 'bit/s',
    where: 'doctor, diagnose',
    doc: 'the link rate one stream should reach',
  },
  rtt: {
    kind: 'duration',
    flag: '--rtt',
    arg: 'duration',
    // a microsecond, as a tcp_info round trip is counted: less is no network's (and would be shown as 0 µs)
    min: 1e-6,
    // an RTT past a minute is no network's
    max: 60,
    default: '2ms',
    unit: 'ms',
    where: 'doctor, diagnose',
    doc: 'the round-trip time to plan for',
  },
  labRtt: {
    kind: 'duration',
    flag: '--rtt',
    arg: 'duration',
    // 0: no delay line; else at least 1 µs, as doctor's (1 ns was taken and shown as "rtt 0 µs");
    // the delay line holds at most 10 s
    min: 1e-6,
    zero: 'no delay line',
    max: 10,
    // the seeds' RTT, as doctor's
    default: '2ms',
    unit: 'ms',
    where: 'lab, lab up, bench --lab rtt=…, parseLabSpec',
    doc: 'round-trip time across the lab',
  },
  udpRcvbuf: {
    kind: 'size',
    flag: '--udp-rcvbuf',
    arg: 'size',
    ...BUFFER,
    // what a receiver asks for by default (receiverRcvbuf)
    default: UDP_RCVBUF,
    unit: 'bytes',
    where: 'doctor, diagnose',
    doc: 'the UDP receive buffer wanted (as getsockopt reports it)',
  },
  receiverRcvbuf: {
    kind: 'size',
    flag: '--rcvbuf',
    arg: 'size',
    ...BUFFER,
    // with GRO: GRO_RCVBUF (src/udp/receiver-options.ts), applied by the receiver
    default: UDP_RCVBUF,
    unit: 'bytes',
    wire: 'rcvbuf',
    where: 'sink udp, createUdpReceiver, runUdpSink, bench udp (without GRO)',
    doc: 'receive buffer target as getsockopt reports it (with GRO: 256 MiB)',
  },
  udpSndbuf: {
    kind: 'size',
    flag: '--sndbuf',
    arg: 'size',
    // SO_SNDBUF takes an int: 3G was a raw RangeError, 0 was taken
    ...BUFFER,
    unit: 'bytes',
    where: 'blast udp, createUdpBlast, createUdpSender (sndbuf)',
    doc: 'SO_SNDBUF to ask for (default: the kernel default)',
  },
  slot: {
    kind: 'size',
    flag: '--slot',
    arg: 'size',
    // one datagram, or one GRO message of up to 64 KiB
    min: 1,
    max: 65_536,
    unit: 'bytes',
    where: 'sink udp, createUdpReceiver, runUdpSink, serve',
    doc: 'bytes per datagram slot (default 2048; 64K with GRO); larger datagrams count as truncated',
  },
  timeout: {
    kind: 'duration',
    flag: '--timeout',
    arg: 'duration',
    above: 0,
    max: LONGEST_TEST,
    // where the scenario sets none
    default: '60s',
    unit: 'ms',
    where: "bench <scenario>, runBench (a scenario's own first)",
    doc: "per run (a scenario's own when it sets one)",
  },
  warmUp: {
    kind: 'duration',
    flag: '--warm-up',
    arg: 'duration',
    min: 0,
    // an hour: a warm-up is a few hundred ms; 99999h would never be ready
    max: AN_HOUR,
    default: '500ms',
    unit: 'ms',
    where: 'sink udp, runUdpSink',
    doc: 'send to itself this long before ready (never faster than it takes), then count from zero (0s: none)',
  },
  sinkDuration: {
    kind: 'duration',
    flag: '--duration',
    arg: 'duration',
    above: 0,
    max: LONGEST_TEST,
    unit: 'ms',
    where: 'sink udp, runUdpSink (duration)',
    doc: 'stop after this long',
  },
  idle: {
    kind: 'duration',
    flag: '--idle',
    arg: 'duration',
    // 0 would stop at the first arrival's next instant
    above: 0,
    max: LONGEST_TEST,
    unit: 'ms',
    where: 'sink udp, runUdpSink',
    doc: 'stop when nothing arrived for this long (after the first arrival; a truncated or dropped datagram counts)',
  },
  bytes: {
    kind: 'size',
    flag: '--bytes',
    arg: 'size',
    min: 1,
    max: MOST_BYTES,
    unit: 'bytes',
    where: 'blast tcp, runTcpBlast',
    doc: 'send this many bytes in all (instead of --duration)',
  },
  writeHwm: {
    kind: 'size',
    flag: '--write-hwm',
    arg: 'size',
    min: 1,
    // a GiB queued in the process before the writer waits: far past where it stops helping
    max: 2 ** 30,
    unit: 'bytes',
    where: 'blast tcp, sink tcp, runTcpBlast and startTcpSink (writableHighWaterMark)',
    doc: "the sockets' writableHighWaterMark: bytes queued in this process before the writer waits for 'drain' (default Node's 16K)",
  },
  labBandwidth: {
    kind: 'bitRate',
    flag: '--bandwidth',
    arg: 'rate',
    above: 0,
    max: FASTEST_LINK,
    unit: 'bit/s',
    where: 'lab, lab up, bench --lab bandwidth=…, parseLabSpec',
    doc: 'rate cap each way (default: none)',
  },
  watch: {
    kind: 'duration',
    flag: '--watch',
    arg: 'duration',
    min: 0.05,
    max: AN_HOUR,
    unit: 's',
    where: 'inspect, watchSockets (intervalSeconds)',
    doc: 'sample every interval; limited shares and drops cover each interval',
  },
  sample: {
    kind: 'duration',
    flag: '--sample',
    arg: 'duration',
    above: 0,
    max: AN_HOUR,
    unit: 'ms',
    where: 'doctor, diagnose',
    doc: 'count drops over this window instead of since the last run (the history file: $SOCKBUF_DOCTOR_HISTORY)',
  },
  probeDuration: {
    kind: 'duration',
    flag: '--probe-duration',
    arg: 'duration',
    ...PROBE_TIME,
    default: '2s',
    where: 'exporter, probeHandler (duration)',
    doc: 'how long each probe sends',
  },
  probeMaxDuration: {
    kind: 'duration',
    flag: '--probe-max-duration',
    arg: 'duration',
    ...PROBE_TIME,
    default: '10s',
    where: 'exporter, probeHandler (maxDuration)',
    doc: "the most one probe may take, connect to results (Prometheus's scrape timeout lowers it)",
  },
  receiver: {
    kind: 'choice',
    flag: '--receiver',
    arg: 'kind',
    choices: ['batch', 'dgram'],
    default: 'batch',
    wire: 'receiver',
    where: 'sink udp, runUdpSink, serve',
    doc: 'batch (recvmmsg reader thread) or dgram (node:dgram)',
  },
  onFull: {
    kind: 'choice',
    flag: '--on-full',
    arg: 'mode',
    choices: ['drop', 'wait'],
    default: 'wait',
    wire: 'on-full',
    where: 'sink udp, createUdpReceiver, serve',
    doc: 'when the ring is full: wait (the kernel buffer absorbs the burst) or drop',
  },
  gro: {
    kind: 'choice',
    flag: '--gro',
    arg: 'mode',
    optionalValue: true,
    choices: ['on', 'off', 'auto'],
    default: 'auto',
    wire: 'gro',
    where: 'sink udp, createUdpReceiver, serve',
    doc: 'UDP_GRO: on, off or auto (alone: on)',
  },
  gso: {
    kind: 'choice',
    flag: '--gso',
    arg: 'mode',
    optionalValue: true,
    choices: ['on', 'off', 'auto'],
    default: 'off',
    where: 'blast udp, createUdpBlast',
    doc: 'UDP_SEGMENT: on, off or auto (alone: on)',
  },
} as const satisfies Record<string, OptionDecl>;

export type OptionName = keyof typeof OPTIONS;
/** The options that take a whole number. */
export type CountOption = {
  [K in OptionName]: (typeof OPTIONS)[K]['kind'] extends 'count' ? K : never;
}[OptionName];

/** The options that take a size, a duration or a bit rate. */
export type MeasureOption = {
  [K in OptionName]: (typeof OPTIONS)[K]['kind'] extends 'size' | 'duration' | 'bitRate' ? K : never;
}[OptionName];

const MEASURES = {
  size: { parse: parseSize, format: formatSize, noun: 'a size' },
  duration: { parse: parseDuration, format: formatDuration, noun: 'a duration' },
  bitRate: { parse: parseBitRate, format: formatBitRate, noun: 'a bit rate' },
} as const;

/** What `option` takes, in words ("a whole number from 1 to 64", "a duration more than 0 and at most 1 m"). */
export function expected(option: OptionName): string {
  const d: OptionDecl = OPTIONS[option];
  if (d.kind === 'choice') return `one of ${d.choices?.join(', ')}`;
  if (d.kind === 'count') return wholeRange(d.min ?? 0, d.max ?? Number.MAX_SAFE_INTEGER);
  if (d.kind === 'rate')
    return `'max', a datagram rate such as 100k, or a bit rate such as 500mbit (at most ${formatBitRate(d.max ?? FASTEST_LINK)} of payload)`;
  const { format, noun } = MEASURES[d.kind];
  const f = (n: number) => {
    if (n === 0) return '0';
    if (d.kind === 'duration' && n >= 3600 && n % 3600 === 0) return `${n / 3600} h`;
    // a size that is not a whole number of KiB (within a byte: 2 GiB − 1) is said in bytes
    if (d.kind === 'size' && n % 1024 !== 0 && (n + 1) % 1024 !== 0) return `${n} B`;
    return format(n);
  };
  const zero = d.zero === undefined ? '' : `0 (${d.zero}) or `;
  if (d.min !== undefined && d.max !== undefined) return `${zero}${noun} from ${f(d.min)} to ${f(d.max)}`;
  const low =
    d.above !== undefined ? `more than ${f(d.above)}` : d.min !== undefined ? `at least ${f(d.min)}` : '';
  const high = d.max === undefined ? '' : `at most ${f(d.max)}`;
  const bounds = [low, high].filter(Boolean).join(' and ');
  return bounds ? `${noun}${d.kind === 'size' ? ' of' : ''} ${bounds}` : noun;
}

/**
 * `value` of a size, duration or bit-rate option (a string with its unit such as the CLI's '2ms', or a
 * number in the declared `unit`), checked against the declared range, in the declared unit; or a
 * UsageError naming `name` (the option as the caller wrote it; `option` by default). A count goes to
 * checkWhole().
 */
export function checkOption(
  option: MeasureOption | CountOption,
  value: unknown,
  name: string = option,
): number {
  const d: OptionDecl = OPTIONS[option];
  if (d.kind === 'count') return checkWhole(option as CountOption, value, name);
  const m = MEASURES[d.kind as keyof typeof MEASURES];
  // a duration the library takes in milliseconds is bounded in seconds
  const scale = d.unit === 'ms' ? 1e-3 : 1;
  let base = Number.NaN;
  if (typeof value === 'string') base = m.parse(value, name);
  else if (typeof value === 'number') base = value * scale;
  if (!within(option as MeasureOption, base)) throw UsageError.invalid(name, value, expected(option));
  return base / scale;
}

/** Whether `base` (bytes, seconds, bit/s) is within `option`'s declared range. */
export function within(option: MeasureOption, base: number): boolean {
  const d: OptionDecl = OPTIONS[option];
  return (
    Number.isFinite(base) &&
    (d.kind !== 'size' || Number.isSafeInteger(base)) &&
    (d.min === undefined || base >= d.min || (d.zero !== undefined && base === 0)) &&
    (d.above === undefined || base > d.above) &&
    (d.max === undefined || base <= d.max)
  );
}

/** The option a far end takes as `wire` on serve's protocol, if one does. */
export function optionOnWire(wire: string): OptionName | undefined {
  return (Object.keys(OPTIONS) as OptionName[]).find((k) => (OPTIONS[k] as OptionDecl).wire === wire);
}

/** The one whole-number reader: a number, or decimal digits (blanks around allowed); else NaN. Pure. */
export function wholeNumber(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : Number.NaN;
  if (typeof value === 'string' && /^\s*\d{1,16}\s*$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : Number.NaN;
  }
  return Number.NaN;
}

/** "a whole number from MIN to MAX" (without an upper end when it is the largest safe integer). */
export function wholeRange(min: number, max: number): string {
  return max >= Number.MAX_SAFE_INTEGER
    ? `a whole number from ${min}`
    : `a whole number from ${min} to ${max}`;
}

/** `value` as a whole number in [min, max], or a UsageError naming `option` (as the caller wrote it). */
export function parseWhole(value: unknown, option: string, min: number, max: number): number {
  const n = wholeNumber(value);
  if (!(n >= min && n <= max)) throw UsageError.invalid(option, value, wholeRange(min, max));
  return n;
}

/** What a count option takes, in words ("a whole number from 1 to 128"). */
export function expectedWhole(option: CountOption): string {
  const { min, max } = OPTIONS[option];
  return wholeRange(min, max);
}

/**
 * `value` as a whole number within `option`'s declared range (a number, or a string such as the CLI's
 * '8'), or a UsageError naming `name` (the option as the caller wrote it; `option` by default).
 */
export function checkWhole(option: CountOption, value: unknown, name: string = option): number {
  const { min, max } = OPTIONS[option];
  return parseWhole(value, name, min, max);
}

/** `value` of a choice option, or a UsageError naming `name`. */
export function checkChoice<K extends OptionName>(option: K, value: unknown, name: string = option): string {
  const { choices } = OPTIONS[option] as OptionDecl;
  if (!choices?.includes(String(value)))
    throw UsageError.invalid(name, value, `one of ${choices?.join(', ')}`);
  return String(value);
}

/** Whether `n` is a buffer size that can be asked for. */
export const isBufferSize = (n: number) =>
  Number.isSafeInteger(n) && n >= BUFFER_BYTES.min && n <= BUFFER_BYTES.max;
