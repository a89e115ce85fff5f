// `sockbuf bench streamer`: seed 003's table, after agave's bench-streamer: `flows` producer sockets
// sending as fast as they can into 1 or N receiving sockets (SO_REUSEPORT; the kernel spreads flows by
// hash), read in batches with a coalesce window. Per run: datagrams/s received, packets per batch,
// receiver CPU time per datagram ("time per packet"), and drops.

import { checkWhole, OPTIONS, parseWhole } from '../../policy/option-registry.js';
import { parseDuration, parseList, parseSize } from '../../policy/units.js';
import { declaredOption } from '../options.js';
import type { Scenario } from '../scenario.js';
import { parsePaths, type UdpPath, udpEnds, udpRow } from '../udp-ends.js';

interface Params {
  sockets: number[];
  rates: string[];
  flows: number;
  coalesce: string;
  size: string;
  duration: string;
  paths: UdpPath[];
}

const scenario: Scenario<Params> = {
  name: 'streamer',
  description: 'agave bench-streamer: 1 vs N reuseport sockets, packets per batch, drops (seed 003)',
  options: [
    declaredOption('sockets', { list: true, description: 'receiving sockets per run', default: '1,8' }),
    {
      flags: '--rates <list>',
      description: "datagrams/s per run, all flows together, or 'max' (seed 003: 3000,27000,max)",
      default: 'max',
    },
    declaredOption('flows', { description: 'producer sockets (distinct source ports)', default: '8' }),
    {
      flags: '--coalesce <duration>',
      description: 'batch coalesce window',
      default: OPTIONS.coalesce.default,
    },
    { flags: '--size <size>', description: 'payload bytes (agave: 1232)', default: '1232' },
    { flags: '--duration <duration>', description: 'per run', default: '5s' },
    {
      flags: '--receivers <list>',
      description: 'paths: batch, gso-batch, batch+gro',
      default: 'batch,batch+gro',
    },
  ],
  params: (o) => {
    const coalesce = String(o.coalesce);
    parseDuration(coalesce, '--coalesce');
    parseSize(String(o.size), '--size');
    parseDuration(String(o.duration), '--duration');
    const paths = parsePaths(String(o.receivers), '--receivers');
    return {
      sockets: parseList(String(o.sockets), '--sockets', (v, opt) => checkWhole('sockets', v, opt)),
      rates: parseList(String(o.rates), '--rates', (v, opt) =>
        v === 'max' ? v : String(parseWhole(v, opt, 1, 100_000_000)),
      ),
      flows: checkWhole('flows', o.flows, '--flows'),
      coalesce,
      size: String(o.size),
      duration: String(o.duration),
      paths: paths.filter((p) => p !== 'dgram'),
    };
  },
  points: (p) =>
    p.rates.flatMap((rate) =>
      p.paths.flatMap((path) => p.sockets.map((n) => ({ path, rate, sockets: String(n) }))),
    ),
  ends: (pt, p) =>
    udpEnds(pt.path as UdpPath, {
      rate: pt.rate,
      size: p.size,
      duration: p.duration,
      flows: p.flows,
      sockets: Number(pt.sockets),
      coalesce: p.coalesce,
    }),
  row: (out) => {
    const r = udpRow(out);
    return {
      datagramsPerSecond: r.receivedPerSecond,
      packetsPerBatch: r.packetsPerBatch,
      cpuUsPerDatagram: r.cpuUsPerDatagram,
      sent: r.sent,
      received: r.received,
      dropped: r.dropped,
      droppedPct: r.droppedPct,
      kernelDrops: r.kernelDrops,
      userspaceDrops: r.userspaceDrops,
      jsCallsPerDatagram: r.jsCallsPerDatagram,
      gro: r.gro,
      gso: r.gso,
    };
  },
  primary: 'datagramsPerSecond',
  timeoutSeconds: (p) => parseDuration(p.duration, '--duration') + 30,
};

export default scenario;
