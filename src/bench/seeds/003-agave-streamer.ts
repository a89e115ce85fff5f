// Seed 003: agave's turbine receive went from 8 sockets on one port (SO_REUSEPORT) to 1, and batches
// filled up: 1.16 → ~3.5 packets per batch. Measured again by the streamer scenario. Pure.
import { type ChartPair, grouped, type SourceFigure } from '../report/charts.js';
import {
  firstNum,
  num,
  param,
  pathOf,
  type ResultRow,
  type ResultsDocument,
  rowsOf,
  type SeedVerdict,
} from '../report/results.js';
import { cell, DATAGRAMS_PER_SECOND } from '../report/views.js';
import { judge, type Seed, si } from './seed.js';

/** The cluster's load in the thread: 2 500–3 000 shreds/s, up to ~27 000 packets/s. */
const THREAD_RATES = ['3000', '27000'];

const batch: SourceFigure = {
  id: '003-batch',
  title: 'Packets per batch: 8 receive sockets vs 1',
  source: 'seed 003: agave A/B nodes, shred_sigverify num_packets ÷ num_batches',
  x: 'receive sockets',
  y: 'packets per batch',
  xScale: 'category',
  series: [
    {
      name: 'packets per batch',
      points: [
        ['8 sockets', 1.16],
        ['1 socket', 3.5],
      ],
    },
  ],
};

/** Packets per batch, 1 socket against 8, at each of the thread's rates (plain batch path). */
function verdict(doc: ResultsDocument): SeedVerdict | undefined {
  const all = rowsOf(doc, 'streamer');
  const rows = all.some((r) => pathOf(r) === 'batch') ? all.filter((r) => pathOf(r) === 'batch') : all;
  if (!rows.some((r) => param(r, 'sockets') === '1')) return undefined;
  const rates = [...new Set(rows.map((r) => param(r, 'rate') ?? 'max'))];
  const at = (rate: string, sockets: (n: number) => boolean) =>
    rows.find((r) => (param(r, 'rate') ?? 'max') === rate && sockets(Number(param(r, 'sockets'))));
  const parts: string[] = [];
  const judged: boolean[] = [];
  for (const rate of rates) {
    const one = at(rate, (n) => n === 1);
    const many = at(rate, (n) => n > 1);
    const b1 = one && num(one, 'packetsPerBatch');
    const bm = many && num(many, 'packetsPerBatch');
    if (b1 === undefined || bm === undefined) continue;
    const cpu = (r: typeof one) => r && num(r, 'cpuUsPerDatagram');
    const c1 = cpu(one);
    const cm = cpu(many);
    const d1 = one && firstNum(one, DATAGRAMS_PER_SECOND);
    parts.push(
      `${rate === 'max' ? `full speed (${si(d1 ?? 0)}/s)` : `${si(Number(rate))}/s`}: 1 socket ${b1.toFixed(2)} vs ${many ? param(many, 'sockets') : '?'} sockets ${bm.toFixed(2)} packets/batch` +
        (c1 && cm ? `, CPU ${c1.toFixed(2)} vs ${cm.toFixed(2)} µs/packet` : ''),
    );
    if (THREAD_RATES.includes(rate)) judged.push(b1 >= 2 * bm);
  }
  if (!parts.length) return undefined;
  const figures = `${parts.join('; ')}; seed: 1 socket ~3.5 vs 8 sockets 1.16 packets/batch at 2 500–27 000/s`;
  if (judged.length < THREAD_RATES.length)
    return judge(
      seed003,
      figures,
      undefined,
      "not measured at both of the thread's rates (3000 and 27000/s)",
    );
  return judge(seed003, figures, judged.every(Boolean));
}

function charts(doc: ResultsDocument): ChartPair[] {
  const all = rowsOf(doc, 'streamer');
  const rows = all.some((r) => pathOf(r) === 'batch') ? all.filter((r) => pathOf(r) === 'batch') : all;
  if (!rows.length) return [];
  // x: the send rate (the thread's 3000 and 27000/s, then full speed), one bar per socket count
  const byRate = rows.map((r) => ({ ...r, at: param(r, 'rate') ?? 'max' }));
  const rate = (title: string, id: string, y: string, get: (r: ResultRow) => number | undefined) =>
    grouped(id, title, byRate, 'at', 'sockets', get, ['datagrams/s sent (max: full speed)', y]);
  const ppb = rate(
    'Streamer: packets per batch, 1 vs 8 sockets, per send rate',
    'streamer',
    'packets per batch',
    (r) => num(r, 'packetsPerBatch'),
  );
  ppb.datasets = ppb.datasets.map((d) => ({ ...d, label: `${d.label} socket(s)` }));
  ppb.caption = `datagrams/s received: ${rows
    .map(
      (r) =>
        `${param(r, 'sockets')} × at ${param(r, 'rate') ?? 'max'}: ${cell({ label: '', get: (x) => firstNum(x, DATAGRAMS_PER_SECOND) }, r)}`,
    )
    .join(' · ')}`;
  const cpu = rate(
    'Streamer: receiver CPU µs per packet, per send rate',
    'streamer-cpu',
    'CPU µs/dgram',
    (r) => num(r, 'cpuUsPerDatagram'),
  );
  cpu.datasets = cpu.datasets.map((d) => ({ ...d, label: `${d.label} socket(s)` }));
  return [
    { ours: ppb, seed: batch },
    { ours: cpu, seed: batch },
  ];
}

export const seed003: Seed = {
  id: '003',
  title: 'agave: 1 receive socket instead of 8',
  thread:
    'anza-xyz/agave pull request #998 "Reduce default from 8 to 1 TVU receive socket/threads" (steviez)',
  url: 'https://github.com/anza-xyz/agave/pull/998',
  finding:
    'Eight sockets competing for the same packets gave 1.16 packets per batch; one socket with recvmmsg ' +
    'and a 1 ms coalesce window gave ~3.5, and ~20 % less time per packet.',
  criterion:
    "1 socket ≥ 2 × the packets per batch of 8 sockets at both of the thread's rates (3000 and 27000/s)",
  figures: [batch],
  entries: [
    {
      id: 'streamer',
      title: 'streamer: 1 vs 8 receive sockets (seed 003)',
      seed: '003',
      scenario: 'streamer',
      // 1232 B (agave's packet) from 64 flows, so that SO_REUSEPORT's hash spreads them over 8 sockets
      // as a cluster's many peers would; the thread's two rates and full speed
      quick: [
        ...['--sockets', '1,8', '--receivers', 'batch', '--rates', '3000,27000,max'],
        ...['--flows', '64', '--size', '1232', '--duration', '1s'],
      ],
      full: [
        ...['--sockets', '1,8', '--receivers', 'batch,batch+gro', '--rates', '3000,27000,max'],
        ...['--flows', '64', '--size', '1232'],
      ],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      issue: 5,
    },
  ],
  tables: ['streamer'],
  verdict,
  charts,
};
