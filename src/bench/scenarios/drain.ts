// `sockbuf bench drain`: how fast one TCP stream drains through each reader (seed 002's table). The
// sender is `blast tcp` with large frames; the receiver `sink tcp --reader R`, or for the reader `net`
// a plain node:net server whose 'data' handler only counts bytes (src/ends/net-drain.child.ts: what a
// Node user has without sockbuf). Compare readers with --expect 'adaptive/net >= 1.3' (the ratio is
// printed) and find the knee of the read size here. The runner alternates the readers round by round,
// each end pinned to its own CPU (placement local), so seed 002 judges per-round ratios (src/bench/paired.ts).
import { parseList, parseSizeIn } from '../../policy/units.js';
import { moduleFile } from '../../sys/package.js';
import { formatReader, parseReader } from '../../tcp/reader.js';
import { lastEvent, numberField } from '../ends.js';
import type { Scenario } from '../scenario.js';

interface Params {
  bytes: number;
  readers: string[];
}

export const DRAIN_READERS =
  'net,data,fixed:8K,fixed:64K,fixed:128K,adaptive,adaptive:max=64K,adaptive:max=256K,adaptive:max=1M';

/** The plain node:net server: not a sockbuf reader, the baseline of seed 002's ratios. */
export const NET_READER = 'net';
const NET_END = moduleFile(new URL('../../ends/net-drain.child', import.meta.url));

/** A reader as a point label (--expect names: no '=' or ','): adaptive:max=64K → adaptive:max64K. */
export function readerLabel(r: string): string {
  return r.replace(/=/g, '').replace(/,/g, '+');
}

const scenario: Scenario<Params> = {
  name: 'drain',
  description: 'TCP drain rate per reader: data (baseline), fixed sizes, adaptive (seed 002)',
  options: [
    { flags: '--bytes <size>', description: 'bytes per run', default: '4GiB' },
    {
      flags: '--readers <list>',
      description:
        "readers to compare (sink tcp --reader values, or net: a plain node:net server; '+' joins an adaptive reader's bounds)",
      default: DRAIN_READERS,
    },
  ],
  params: (o) => {
    const bytes = parseSizeIn(String(o.bytes), '--bytes', 1, Number.MAX_SAFE_INTEGER);
    // an adaptive reader's bounds are joined with '+' in the list: adaptive:max=256K+poll=0
    const readers = parseList(String(o.readers), '--readers', (v, opt) => {
      const reader = v.replace(/\+/g, ',');
      if (reader !== NET_READER) parseReader(reader, opt);
      return reader;
    });
    return { bytes, readers };
  },
  points: (p) => p.readers.map((r) => ({ reader: readerLabel(r) })),
  ends: (pt, p) => {
    const reader = p.readers.find((r) => readerLabel(r) === pt.reader) ?? pt.reader;
    return {
      receiver:
        reader === NET_READER
          ? { module: NET_END, args: ['--host', '{host}'] }
          : { sockbuf: ['sink', 'tcp', '--listen', '{host}:0', '--reader', reader, '--once', '--json'] },
      sender: {
        sockbuf: [
          'blast',
          'tcp',
          '--to',
          '{host}:{port}',
          '--bytes',
          String(p.bytes),
          '--size',
          '1M',
          '--json',
        ],
      },
    };
  },
  row: (out) => {
    const r = lastEvent(out.receiver, 'result');
    const sent = lastEvent(out.sender, 'result');
    const net = r.reader === NET_READER;
    // the plain server says its reads in its result; the sink in its connection line
    const reader = net ? r : (lastEvent(out.receiver, 'connection').reader as Record<string, unknown>);
    return {
      readerSpec: net ? NET_READER : formatReader(parseReader(String(r.reader))),
      bytesPerSecond: numberField(r, 'bytesPerSecond'),
      bytes: numberField(r, 'bytes'),
      seconds: numberField(r, 'seconds'),
      reads: numberField(reader, 'reads'),
      meanReadBytes: numberField(reader, 'meanReadBytes'),
      ...(net ? {} : { finalReadBytes: numberField(reader, 'sizeBytes') }),
      // what the reader costs: on loopback a large reader's rate is the sender's (it runs TCP's
      // receiving side too, and pays to wake the receiver), so readers that tie in GB/s differ here
      receiverCpuNsPerByte: (numberField(r, 'cpuSeconds') * 1e9) / numberField(r, 'bytes'),
      senderBusy: numberField(sent, 'cpuSeconds') / numberField(sent, 'seconds'),
    };
  },
  primary: 'bytesPerSecond',
  columns: [
    // GB/s, as seed 002 gives it (one unit per figure in every mode: the suite's table uses it too)
    { key: 'bytesPerSecond', title: 'GB/s', format: (v) => (v / 1e9).toFixed(2) },
    { key: 'meanReadBytes', title: 'mean read B', format: (v) => Math.round(v).toLocaleString('en-US') },
    { key: 'receiverCpuNsPerByte', title: 'rx CPU ns/B', format: (v) => v.toFixed(2) },
    { key: 'senderBusy', title: 'sender busy', format: (v) => `${Math.round(v * 100)} %` },
    { key: 'reads' },
    { key: 'seconds' },
  ],
  timeoutSeconds: (p) => 60 + p.bytes / 50e6,
};
export default scenario;
