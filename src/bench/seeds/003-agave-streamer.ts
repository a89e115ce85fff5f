// Seed 003: agave's turbine receive went from 8 sockets on one port (SO_REUSEPORT) to 1, and batches
// filled up: 1.16 → ~3.5 packets per batch. Measured again by the streamer scenario. Pure.
import { type ChartPair, grouped, type SourceFigure } from '../report/charts.js';
import {
  firstNum,
  num,
  param,
  pathOf,
  type ResultsDocument,
  rowsOf,
  type Verdict,
} from '../report/results.js';
import { cell, DATAGRAMS_PER_SECOND } from '../report/views.js';
import { type Seed, si } from './seed.js';

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

/** Packets per batch with one socket against many, on the plain batch path. */
function verdict(doc: ResultsDocument): Verdict | undefined {
  const all = rowsOf(doc, 'streamer');
  const rows = all.some((r) => pathOf(r) === 'batch') ? all.filter((r) => pathOf(r) === 'batch') : all;
  const one = rows.find((r) => param(r, 'sockets') === '1');
  const many = rows.filter((r) => Number(param(r, 'sockets')) > 1).pop();
  if (!one) return undefined;
  const b1 = num(one, 'packetsPerBatch');
  const d1 = firstNum(one, DATAGRAMS_PER_SECOND);
  const parts = [`1 socket ${b1?.toFixed(2) ?? '?'} packets/batch${d1 ? ` at ${si(d1)}/s` : ''}`];
  const bm = many && num(many, 'packetsPerBatch');
  const dm = many && firstNum(many, DATAGRAMS_PER_SECOND);
  if (many && bm !== undefined)
    parts.push(`${param(many, 'sockets')} sockets ${bm.toFixed(2)}${dm ? ` at ${si(dm)}/s` : ''}`);
  return {
    seed: '003',
    text: `seed 003: ${parts.join(' vs ')} — seed: 1 socket ~3.5 vs 8 sockets 1.16 packets/batch, bench-streamer 879 k/s`,
    ok: b1 !== undefined && bm !== undefined ? b1 >= bm : undefined,
  };
}

function charts(doc: ResultsDocument): ChartPair[] {
  const rows = rowsOf(doc, 'streamer');
  if (!rows.length) return [];
  const ours = grouped(
    'streamer',
    'Streamer: packets per batch per number of sockets',
    rows,
    'sockets',
    'path',
    (r) => num(r, 'packetsPerBatch'),
    ['receive sockets', 'packets per batch'],
  );
  ours.caption = `datagrams/s: ${rows
    .map(
      (r) =>
        `${pathOf(r)} × ${param(r, 'sockets')}: ${cell({ label: '', get: (x) => firstNum(x, DATAGRAMS_PER_SECOND) }, r)}`,
    )
    .join(' · ')}`;
  return [{ ours, seed: batch }];
}

export const seed003: Seed = {
  id: '003',
  title: 'agave: 1 receive socket instead of 8',
  thread:
    'anza-xyz/agave pull request #998 "Reduce default from 8 to 1 TVU receive socket/threads" (steviez)',
  finding:
    'Eight sockets competing for the same packets gave 1.16 packets per batch; one socket with recvmmsg ' +
    'and a 1 ms coalesce window gave ~3.5, and ~20 % less time per packet.',
  criterion: '1 socket fills batches at least as well as 8',
  figures: [batch],
  entries: [
    {
      id: 'streamer',
      title: 'streamer: 1 vs 8 receive sockets (seed 003)',
      seed: '003',
      scenario: 'streamer',
      quick: ['--sockets', '1,8', '--receivers', 'batch', '--duration', '1s'],
      full: [],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      issue: 5,
    },
  ],
  tables: ['streamer'],
  verdict,
  charts,
};
