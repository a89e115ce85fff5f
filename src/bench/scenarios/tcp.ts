// `sockbuf bench tcp`: a bulk TCP stream per buffer policy × message size — seed 000's columns: MiB/s,
// messages/s, the sender's rwnd-limited and sndbuf-limited % mid-run, cwnd and window scales. The
// receiver pins rcvbuf (osiris replica), the sender pins sndbuf (replica reader). Δ vs auto: --expect
// 'rcvbuf:229376/auto >= 0.9' prints the ratio per size. Across an RTT: --placement lab.
import { FRAME_INDEX_BYTES } from '../../ends/hello.js';
import { UsageError } from '../../errors.js';
import { BUFFER_BYTES, isBufferSize } from '../../policy/option-registry.js';
import { parseList, parsePositiveDuration, parseSize, parseSizeIn } from '../../policy/units.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../tcp/frame.js';
import { lastEvent, numberField } from '../ends.js';
import type { OptionSpec } from '../options.js';
import type { EndOutput, Scenario } from '../scenario.js';

interface Policy {
  label: string;
  rcvbuf?: number;
  sndbuf?: number;
}

interface Params {
  policies: Policy[];
  sizes: number[];
  seconds: number;
  hwms?: { label: string; bytes?: number }[];
}

/**
 * `auto`, `rcvbuf=SIZE`, `sndbuf=SIZE`, or `both=SIZE` (SO_RCVBUF and SO_SNDBUF pinned, as RocketMQ
 * 4.9.2 did) → a policy; its label uses ':' (labels carry no '=', '/', '[' or ']').
 */
export function parsePolicy(v: string, option = '--policies'): Policy {
  if (v === 'auto') return { label: 'auto' };
  const m = /^(rcvbuf|sndbuf|both)=(.+)$/.exec(v);
  if (!m) throw UsageError.invalid(option, v, 'auto, rcvbuf=SIZE, sndbuf=SIZE or both=SIZE');
  // what the ends take (1 B to 2 GiB), refused here before any end starts
  const n = parseSize(m[2], option);
  if (!isBufferSize(n)) throw UsageError.invalid(option, v, `${m[1]}=SIZE from ${BUFFER_BYTES.expected}`);
  if (m[1] === 'both') return { label: `both:${n}`, rcvbuf: n, sndbuf: n };
  return { label: `${m[1]}:${n}`, [m[1]]: n };
}

/** A message size blast carries: a frame holds its index and offset, and at most 16 MiB. */
export function parseFrameSize(v: string, option = '--sizes'): number {
  return parseSizeIn(v, option, FRAME_INDEX_BYTES, DEFAULT_MAX_FRAME_BYTES, 'a frame carries its index');
}

/**
 * A write water mark for `--write-hwms`: `default` (Node's 16 KiB, no `--write-hwm` passed) or a size
 * (`--write-hwm SIZE` on both ends: the sockets' writableHighWaterMark, writers wait for 'drain').
 */
export function parseHwm(v: string, option = '--write-hwms'): { label: string; bytes?: number } {
  if (v === 'default') return { label: 'default' };
  const n = parseSize(v, option);
  return { label: String(n), bytes: n };
}

/** `--write-hwms`, shared by the scenarios whose ends write frames (tcp, ping). */
export const WRITE_HWMS_OPTION: OptionSpec = {
  flags: '--write-hwms <list>',
  description:
    "write water marks on both ends: default | SIZE (writableHighWaterMark; the writer waits for 'drain')",
};

/** The parameters `--write-hwms` gives: none when it was not given. */
export function writeHwms(value: unknown): { hwms?: { label: string; bytes?: number }[] } {
  return value === undefined ? {} : { hwms: parseList(String(value), '--write-hwms', parseHwm) };
}

/** The `--write-hwm` arguments for a point's `hwm` label (none for `default` or no label). */
export function hwmArgs(label: string | undefined): string[] {
  return label === undefined || label === 'default' ? [] : ['--write-hwm', label];
}

/** Points × the water marks, when `--write-hwms` was given (a point has an `hwm` label only then). */
export function withHwms<T extends Record<string, string>>(
  points: T[],
  hwms: { label: string }[] | undefined,
): Record<string, string>[] {
  return hwms ? points.flatMap((pt) => hwms.map((h) => ({ ...pt, hwm: h.label }))) : points;
}

/** The sender's interval lines from the middle of the run (not the slow start, not the tail). */
export function midRun(sender: EndOutput): Record<string, unknown>[] {
  const iv = sender.lines.filter((l) => l.event === 'interval');
  const streams = iv.map((l) => ((l.streams as Record<string, unknown>[]) ?? [])[0]).filter(Boolean);
  if (streams.length <= 2) return streams;
  return streams.slice(Math.floor(streams.length / 4), Math.ceil((3 * streams.length) / 4));
}

function median(xs: number[]): number | null {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

const scenario: Scenario<Params> = {
  name: 'tcp',
  description: 'TCP bulk throughput per buffer policy × message size, with rwnd/sndbuf-limited % (seed 000)',
  options: [
    {
      flags: '--policies <list>',
      description: 'auto | rcvbuf=SIZE | sndbuf=SIZE',
      default: 'auto,rcvbuf=229376,sndbuf=229376',
    },
    { flags: '--sizes <list>', description: 'message payload sizes', default: '250,4000,16000,100000' },
    { flags: '--duration <duration>', description: 'per run', default: '10s' },
    WRITE_HWMS_OPTION,
  ],
  params: (o) => {
    const seconds = parsePositiveDuration(String(o.duration), '--duration');
    return {
      policies: parseList(String(o.policies), '--policies', parsePolicy),
      sizes: parseList(String(o.sizes), '--sizes', parseFrameSize),
      seconds,
      ...writeHwms(o.writeHwms),
    };
  },
  points: (p) =>
    withHwms(
      p.policies.flatMap((pol) => p.sizes.map((s) => ({ policy: pol.label, size: String(s) }))),
      p.hwms,
    ),
  ends: (pt, p) => {
    const pol = p.policies.find((x) => x.label === pt.policy) as Policy;
    return {
      receiver: {
        sockbuf: [
          'sink',
          'tcp',
          '--listen',
          '{host}:0',
          '--once',
          '--json',
          '--rcvbuf',
          String(pol.rcvbuf ?? 'auto'),
          ...hwmArgs(pt.hwm),
        ],
      },
      sender: {
        sockbuf: [
          'blast',
          'tcp',
          '--to',
          '{host}:{port}',
          '--json',
          '--duration',
          `${p.seconds}s`,
          '--size',
          pt.size,
          '--sndbuf',
          String(pol.sndbuf ?? 'auto'),
          ...hwmArgs(pt.hwm),
        ],
      },
    };
  },
  row: (out, pt) => {
    const r = lastEvent(out.receiver, 'result');
    const bps = numberField(r, 'bytesPerSecond');
    const mid = midRun(out.sender);
    const num = (k: string) => median(mid.map((s) => Number(s[k])));
    const last = mid[mid.length - 1] ?? {};
    return {
      bytesPerSecond: bps,
      messagesPerSecond: bps / (Number(pt.size) + 4),
      rwndLimitedPct: num('rwndLimitedPct'),
      sndbufLimitedPct: num('sndbufLimitedPct'),
      cwndSegments: num('cwndSegments'),
      rttUs: num('rttUs'),
      wscale: last.sndWscale === undefined ? null : `${last.sndWscale},${last.rcvWscale}`,
      sndbufBytes: num('sndbufBytes'),
    };
  },
  primary: 'bytesPerSecond',
  columns: [
    { key: 'bytesPerSecond', title: 'MiB/s', format: (v) => (v / 2 ** 20).toFixed(1) },
    { key: 'messagesPerSecond', title: 'msgs/s', format: (v) => Math.round(v).toLocaleString('en-US') },
    { key: 'rwndLimitedPct', title: 'rwnd-limited' },
    { key: 'sndbufLimitedPct', title: 'sndbuf-limited' },
    { key: 'cwndSegments', title: 'cwnd' },
    { key: 'rttUs', title: 'rtt' },
  ],
  timeoutSeconds: (p) => 60 + p.seconds * 2,
};
export default scenario;
