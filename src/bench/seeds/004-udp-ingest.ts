// Seed 004: an Elixir UDP ingest service (hindsight) reading one datagram per call dropped 7 % of small messages at
// 100/s and 96 % at 100 000/s. Measured again by the udp scenario's loss ladder per receive path and its
// search for the highest loss-free rate. Pure.
import { type ChartPair, figureValue, type SourceFigure } from '../report/charts.js';
import {
  isFindMax,
  num,
  pathOf,
  type ResultRow,
  type ResultsDocument,
  rowsOf,
  type SeedVerdict,
} from '../report/results.js';
import { askedRate, droppedPct, sentRate } from '../report/views.js';
import { judge, pc, type Seed, si, x2 } from './seed.js';

const loss: SourceFigure = {
  id: '004-loss',
  title: 'Loss vs send rate, small UDP messages',
  source: 'seed 004, "Data": % dropped per messages/second (100 000/s really sent ~45 714/s)',
  x: 'datagrams/s sent',
  y: '% dropped',
  xScale: 'log',
  series: [
    {
      name: 'receive (one datagram per call)',
      points: [
        [100, 7.26],
        [1000, 25.62],
        [10000, 38.81],
        [100000, 96.41],
      ],
    },
    {
      name: 'netcat',
      points: [
        [1000, 2.58],
        [100000, 61.59],
      ],
    },
  ],
};

/** Loss per receive path at the top rate, and the highest loss-free rates against node:dgram's. */
function verdict(doc: ResultsDocument): SeedVerdict | undefined {
  const rows = rowsOf(doc, 'udp');
  if (!rows.length) return undefined;
  const ladder = rows.filter((r) => !isFindMax(r));
  const max = rows.filter(isFindMax);
  const parts: string[] = [];
  const seedTop = figureValue(loss, 100000) ?? 0;
  for (const path of [...new Set(ladder.map(pathOf))]) {
    const top = ladder
      .filter((r) => pathOf(r) === path)
      .sort((a, b) => (sentRate(b) ?? 0) - (sentRate(a) ?? 0))[0];
    const d = top && droppedPct(top);
    if (top && d !== undefined) parts.push(`${path} ${pc(d)} dropped at ${si(sentRate(top) ?? 0)}/s`);
  }
  const free = max
    .map((r) => ({ path: pathOf(r), rate: num(r, 'maxLossFreeRate') }))
    .filter((m): m is { path: string | undefined; rate: number } => m.rate !== undefined);
  if (free.length) {
    const say = (m: { path?: string; rate: number }) =>
      `${m.path} ${m.rate > 0 ? `${si(m.rate)}/s` : 'none found'}`;
    parts.push(`loss-free up to ${free.map(say).join(', ')}`);
  }
  const rate = (p: string) => free.find((m) => m.path === p)?.rate;
  const dgram = rate('dgram');
  const ratios = ['batch', 'batch+gro']
    .map((p) => [p, rate(p)] as const)
    .filter((x): x is readonly [string, number] => !!x[1] && !!dgram)
    .map(([p, v]) => `${p} = ${x2(v / (dgram as number))} dgram`);
  if (ratios.length) parts.push(ratios.join(', '));
  const figures = `${parts.join('; ')}; seed: ${pc(seedTop)} dropped at 100 000/s (really ~45 714/s), 7.3 % at 100/s`;
  // the ladder's top rung that both paths ran: 'max' (each sender as fast as it goes) when both ran
  // it, else the top numeric rate
  const rungOf = (path: string) => ladder.filter((r) => pathOf(r) === path);
  const atMax = (r: ResultRow) => askedRate(r) === undefined;
  const dgramRates = new Set(rungOf('dgram').map(askedRate));
  const common = rungOf('batch')
    .map((r) => askedRate(r))
    .filter((v) => dgramRates.has(v));
  const numeric = common.filter((v): v is number => v !== undefined);
  const top = common.includes(undefined)
    ? 'max'
    : numeric.length
      ? numeric.reduce((a, b) => Math.max(a, b))
      : undefined;
  const lossAt = (path: string) => {
    const r = rungOf(path).find((x) => (top === 'max' ? atMax(x) : askedRate(x) === top));
    return top === undefined ? undefined : r && droppedPct(r);
  };
  const lb = lossAt('batch');
  const ld = lossAt('dgram');
  const byLadder = lb !== undefined && ld !== undefined ? lb <= 0.1 && ld > 1 : undefined;
  const batch = rate('batch');
  const byMax = dgram && batch ? batch / dgram >= 1.3 : undefined;
  if (byLadder === undefined && byMax === undefined)
    return judge(seed004, figures, undefined, 'needs dgram and batch on the ladder or in find-max');
  return judge(seed004, figures, byLadder === true || byMax === true);
}

function charts(doc: ResultsDocument): ChartPair[] {
  const rows = rowsOf(doc, 'udp').filter((r) => !isFindMax(r));
  if (!rows.length) return [];
  const paths = [...new Set(rows.map(pathOf))];
  return [
    {
      ours: {
        id: 'udp-loss',
        title: 'UDP loss vs send rate per receive path (loopback)',
        type: 'line',
        xTitle: 'datagrams/s sent (log)',
        yTitle: '% dropped',
        xLog: true,
        datasets: paths.map((path) => ({
          label: path ?? '',
          data: rows
            .filter((r) => pathOf(r) === path)
            .map((r) => ({ x: sentRate(r) ?? Number.NaN, y: droppedPct(r) ?? Number.NaN }))
            .filter((p) => p.x > 0 && Number.isFinite(p.y))
            .sort((a, b) => a.x - b.x),
        })),
      },
      seed: loss,
    },
  ];
}

export const seed004: Seed = {
  id: '004',
  title: 'UDP receive drops from 100 messages/s',
  thread:
    'inhindsight/hindsight issue #191 "Receive UDP Performance" (ManApart), an Elixir UDP ingest service',
  url: 'https://github.com/inhindsight/hindsight/issues/191',
  finding:
    'A receiver reading one datagram per call dropped 7 % at 100/s, 25 % at 1000/s, 39 % at 10 000/s and ' +
    '96 % at 100 000/s; even netcat lost 62 % at the top rate.',
  criterion:
    "at the ladder's top rate batch loses ≤ 0.1 % where node:dgram loses > 1 %, or batch's highest loss-free rate ≥ 1.3 × dgram's",
  figures: [loss],
  entries: [
    {
      id: 'udp',
      title: 'UDP loss ladder per receive path (seed 004)',
      seed: '004',
      scenario: 'udp',
      quick: ['--receivers', 'dgram,batch', '--rates', '1000,100000,max', '--duration', '1s'],
      full: ['--receivers', 'dgram,batch'],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      issue: 5,
    },
    {
      // the thread's "Netcat instead of receive" rows: OpenBSD nc -u -l as the receiver, at its rates
      id: 'udp-netcat',
      title: 'UDP loss with netcat as the receiver (seed 004)',
      seed: '004',
      scenario: 'udp',
      quick: ['--receivers', 'netcat', '--rates', '1000,100000', '--duration', '1s'],
      full: ['--receivers', 'netcat', '--rates', '100,1000,10000,100000'],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      needs: [{ command: 'nc', package: 'netcat-openbsd' }],
    },
    {
      id: 'udp-max',
      title: 'UDP highest loss-free rate per receive path, by search (seed 004)',
      seed: '004',
      scenario: 'udp',
      quick: ['--find-max', '--receivers', 'dgram,batch', '--duration', '500ms', '--steps', '4'],
      full: ['--find-max', '--receivers', 'dgram,batch,gso-batch,batch+gro'],
      repeat: { quick: 1, full: 1 },
      placement: 'local',
      issue: 5,
    },
    {
      id: 'gso',
      title: 'UDP GSO sender into a receiver without and with GRO (beyond recvmmsg)',
      seed: '004',
      scenario: 'udp',
      quick: ['--receivers', 'gso-batch,batch+gro', '--rates', 'max', '--duration', '1s'],
      full: ['--receivers', 'gso-batch,batch+gro', '--rates', '100000,1000000,max'],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      issue: 7,
    },
  ],
  tables: ['udp', 'udp-max'],
  verdict,
  charts,
};
