// `sockbuf bench ping`: framed request/response over one TCP connection (seed 001's remoting ping):
// round trips per second and latency p50/p99/p999 per buffer policy × size × requests in flight.

import { checkWhole } from '../../policy/option-registry.js';
import { parseList, parsePositiveDuration, parseSizeIn } from '../../policy/units.js';
import { moduleFile } from '../../sys/package.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../tcp/frame.js';
import { lastEvent, numberField } from '../ends.js';
import { declaredOption } from '../options.js';
import type { Scenario } from '../scenario.js';
import { hwmArgs, parsePolicy, WRITE_HWMS_OPTION, withHwms, writeHwms } from './tcp.js';

const END = moduleFile(new URL('../../ends/bench-tcp.child', import.meta.url));

interface Params {
  policies: { label: string; rcvbuf?: number; sndbuf?: number }[];
  sizes: number[];
  inflight: number[];
  seconds: number;
  hwms?: { label: string; bytes?: number }[];
}

/** Microseconds as the suite's table writes them: the unit in the column title, not in the cell. */
const us = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));

const scenario: Scenario<Params> = {
  name: 'ping',
  description: 'framed request/response: round trips/s and latency p50/p99/p999 (seed 001)',
  options: [
    {
      flags: '--sizes <list>',
      description: 'request = response payload sizes',
      default: '250,4000,16000,100000',
    },
    declaredOption('inflight', { list: true, description: 'requests in flight', default: '1,16' }),
    {
      flags: '--policies <list>',
      description: 'auto | rcvbuf=SIZE | sndbuf=SIZE | both=SIZE (pinned on both ends)',
      default: 'auto,rcvbuf=65535',
    },
    { flags: '--duration <duration>', description: 'per run', default: '3s' },
    WRITE_HWMS_OPTION,
  ],
  params: (o) => {
    const seconds = parsePositiveDuration(String(o.duration), '--duration');
    return {
      policies: parseList(String(o.policies), '--policies', parsePolicy),
      // the echo end decodes frames of at most 16 MiB
      sizes: parseList(String(o.sizes), '--sizes', (v, opt) =>
        parseSizeIn(v, opt, 1, DEFAULT_MAX_FRAME_BYTES, 'the largest frame the echo end takes'),
      ),
      inflight: parseList(String(o.inflight), '--inflight', (v, opt) => checkWhole('inflight', v, opt)),
      seconds,
      ...writeHwms(o.writeHwms),
    };
  },
  points: (p) =>
    withHwms(
      p.policies.flatMap((pol) =>
        p.sizes.flatMap((s) =>
          p.inflight.map((k) => ({ policy: pol.label, size: String(s), inflight: String(k) })),
        ),
      ),
      p.hwms,
    ),
  ends: (pt, p) => {
    const pol = p.policies.find((x) => x.label === pt.policy) as Params['policies'][number];
    const bufs = [
      ...['--rcvbuf', String(pol.rcvbuf ?? 'auto'), '--sndbuf', String(pol.sndbuf ?? 'auto')],
      ...hwmArgs(pt.hwm),
    ];
    return {
      // a sockbuf command, not a module: `--remote` runs it on a sockbuf serve host
      receiver: { sockbuf: ['sink', 'tcp', '--echo', '--once', '--listen', '{host}:0', '--json', ...bufs] },
      sender: {
        module: END,
        args: [
          'ping',
          '--host',
          '{host}',
          '--port',
          '{port}',
          '--size',
          pt.size,
          '--inflight',
          pt.inflight,
          '--seconds',
          String(p.seconds),
          ...bufs,
        ],
      },
    };
  },
  row: (out) => {
    const r = lastEvent(out.sender, 'result');
    const f = (k: string) => numberField(r, k);
    return {
      roundTripsPerSecond: f('roundTripsPerSecond'),
      bytesPerSecond: f('bytesPerSecond'),
      latencyP50Us: f('latencyP50Us'),
      latencyP99Us: f('latencyP99Us'),
      latencyP999Us: f('latencyP999Us'),
      // how often the writer waited for 'drain' (--write-hwm only; 0 without)
      drainWaits: Number(r.drainWaits ?? 0),
    };
  },
  primary: 'roundTripsPerSecond',
  columns: [
    {
      key: 'roundTripsPerSecond',
      title: 'round trips/s',
      format: (v) => Math.round(v).toLocaleString('en-US'),
    },
    { key: 'latencyP50Us', title: 'p50 µs', format: us },
    { key: 'latencyP99Us', title: 'p99 µs', format: us },
    { key: 'latencyP999Us', title: 'p99.9 µs', format: us },
  ],
  timeoutSeconds: (p) => 30 + p.seconds * 2,
};
export default scenario;
