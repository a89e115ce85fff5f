// `sockbuf bench udp`: seed 004's table (rate → sent, received, dropped, where) per path, or with
// --find-max the highest loss-free rate per path, found by search.
//
// The search: one run at the sender's full speed ('max'); if its loss is within the tolerance that
// is the answer (the receiver keeps up with the fastest sender this machine has). Otherwise bisect
// geometrically between a quarter of what the receiver took at full speed (at least 1000/s) and the
// rate the sender reached, --steps times; the answer is the rate the sender achieved in the fastest
// run whose loss stayed within the tolerance. Loss = (sent − received) / sent.

import { parseSendRate } from '../../ends/udp-blast.js';
import { HEADER_BYTES } from '../../ends/udp-header.js';
import { EnvironmentError } from '../../errors.js';
import { checkOption, checkWhole, MAX_DATAGRAM, OPTIONS } from '../../policy/option-registry.js';
import { parseDuration, parseList, parsePercent, parseSizeIn } from '../../policy/units.js';
import { which } from '../../sys/process.js';
import { declaredOption } from '../options.js';
import type { Row, Scenario } from '../scenario.js';
import { parsePaths, type UdpPath, udpEnds, udpRow } from '../udp-ends.js';

interface Params {
  paths: UdpPath[];
  rates: string[];
  size: string;
  duration: string;
  findMax: boolean;
  tolerancePct: number;
  steps: number;
  rcvbuf: string;
}

const scenario: Scenario<Params> = {
  name: 'udp',
  description: 'UDP loss ladder per receiver path (seed 004); --find-max: highest loss-free rate',
  options: [
    {
      flags: '--receivers <list>',
      description: 'paths: dgram, batch, gso-batch, batch+gro, netcat (OpenBSD nc -u -l; one sender)',
      default: 'dgram,batch,batch+gro',
    },
    {
      flags: '--rates <list>',
      description: 'datagram rates of the ladder (or bit rates), max = as fast as it can',
      default: '100,1000,10000,100000,max',
    },
    {
      flags: '--size <size>',
      description: 'payload bytes per datagram',
      default: String(OPTIONS.blastSize.default),
    },
    { flags: '--duration <duration>', description: 'per run (default 10s; 2s per trial with --find-max)' },
    { flags: '--find-max', description: 'search the highest loss-free rate per path instead of the ladder' },
    {
      flags: '--tolerance <pct>',
      description: 'loss a run may have and still count as loss-free (--find-max)',
      default: '0.1%',
    },
    declaredOption('steps'),
    {
      flags: '--rcvbuf <size>',
      description: 'receive buffer target of every sink (dgram and batch alike)',
      default: '8MiB',
    },
  ],
  params: (o) => {
    const size = String(o.size);
    // a datagram carries a 24-byte header (magic, sequence, timestamps); 65 507 B is UDP's most over IPv4
    const bytes = parseSizeIn(
      size,
      '--size',
      HEADER_BYTES,
      MAX_DATAGRAM,
      'a datagram carries a 24-byte header',
    );
    const rates = parseList(String(o.rates), '--rates', (v, opt) => {
      parseSendRate(v, bytes, opt);
      return v;
    });
    const findMax = Boolean(o.findMax);
    const duration = o.duration === undefined ? (findMax ? '2s' : '10s') : String(o.duration);
    parseDuration(duration, '--duration');
    const paths = parsePaths(String(o.receivers), '--receivers');
    if (paths.includes('netcat') && !which('nc'))
      throw new EnvironmentError('--receivers netcat: nc is not installed (Debian: netcat-openbsd)');
    return {
      paths,
      rates,
      size,
      duration,
      findMax,
      tolerancePct: parsePercent(String(o.tolerance), '--tolerance') * 100,
      steps: checkWhole('steps', o.steps, '--steps'),
      rcvbuf: String(
        checkOption('receiverRcvbuf', String(o.rcvbuf ?? OPTIONS.receiverRcvbuf.default), '--rcvbuf'),
      ),
    };
  },
  points: (p) =>
    p.findMax
      ? p.paths.map((path) => ({ path }))
      : p.paths.flatMap((path) => p.rates.map((rate) => ({ path, rate }))),
  ends: (pt, p) =>
    udpEnds(pt.path as UdpPath, {
      rate: pt.rate ?? OPTIONS.rate.default,
      size: p.size,
      duration: p.duration,
      rcvbuf: p.rcvbuf,
    }),
  row: (out) => udpRow(out),
  search: async (pt, p, run) => {
    if (!p.findMax) return udpRow(await run(scenario.ends(pt, p)));
    const path = pt.path as UdpPath;
    const trial = async (rate: string) =>
      udpRow(await run(udpEnds(path, { rate, size: p.size, duration: p.duration, rcvbuf: p.rcvbuf })));
    const ok = (r: Row) => Number(r.droppedPct) <= p.tolerancePct;
    const top = await trial('max');
    const senderMax = Number(top.sentPerSecond);
    let best: Row | undefined = ok(top) ? top : undefined;
    let trials = 1;
    if (!best) {
      // geometric bisection below the sender's top, from a quarter of what the receiver took at full
      // speed (a receiver that took R/s while losing is rarely loss-free below R/4; 1000/s at least):
      // a narrower range gives a finer answer in the same number of trials
      const took = Number(top.receivedPerSecond);
      let lo = Math.max(Math.min(1000, senderMax / 2), Math.min(took / 4, senderMax / 2));
      let hi = senderMax;
      for (let k = 0; k < p.steps; k++) {
        const mid = Math.max(1, Math.round(Math.sqrt(lo * hi)));
        const r = await trial(String(mid));
        trials++;
        if (ok(r)) {
          lo = mid;
          if (!best || Number(r.sentPerSecond) > Number(best.sentPerSecond)) best = r;
        } else hi = mid;
      }
    }
    return {
      maxLossFreeRate: best ? Number(best.sentPerSecond) : 0,
      keptUpWithSender: best === top,
      senderMaxRate: senderMax,
      droppedPctAtMax: Number(top.droppedPct),
      tolerancePct: p.tolerancePct,
      trials,
      jsCallsPerDatagram: best ? Number(best.jsCallsPerDatagram) : Number(top.jsCallsPerDatagram),
      packetsPerBatch: best ? Number(best.packetsPerBatch) : Number(top.packetsPerBatch),
      cpuUsPerDatagram: best ? Number(best.cpuUsPerDatagram) : Number(top.cpuUsPerDatagram),
      gro: top.gro,
      gso: top.gso,
    };
  },
  primary: 'maxLossFreeRate',
  timeoutSeconds: (p) => parseDuration(p.duration, '--duration') + 30,
};

export default scenario;
