// One line per seed: our figure beside the seed's own (src/bench/seeds.ts). Pure: rows in, lines out.
// A seed whose scenarios are absent from the results gets no line.
import {
  firstNum,
  isFindMax,
  labRttMs,
  num,
  param,
  pathOf,
  type ResultRow,
  type ResultsDocument,
  rowsOf,
  type Verdict,
} from './report/results.js';
import {
  DATAGRAMS_PER_SECOND,
  droppedPct,
  gbPerSecond,
  isPinned,
  mibPerSecond,
  sentRate,
} from './report/views.js';
import { type SeedId, seedValue } from './seeds.js';

const x2 = (v: number) => `${v.toFixed(2)} ×`;
const pc = (v: number) => `${v < 10 ? v.toFixed(1) : Math.round(v)} %`;
const si = (v: number) =>
  v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : v >= 1e3 ? `${Math.round(v / 1e3)} k` : `${Math.round(v)}`;

function rttText(doc: ResultsDocument, rows: ResultRow[]): string {
  const ms = labRttMs(doc, rows[0]);
  return ms === undefined ? 'across the lab' : `at ${ms} ms`;
}

/** Seed 000: pinned rcvbuf ÷ autotuned, and the pinned run's rwnd-limited share (lab if we have it). */
function seed000(doc: ResultsDocument): Verdict | undefined {
  const lab = rowsOf(doc, 'tcp', 'lab');
  const rows = lab.length ? lab : rowsOf(doc, 'tcp', 'local');
  const size = rows.some((r) => param(r, 'size') === '8192') ? '8192' : undefined;
  const at = (policy: (p: string | undefined) => boolean) =>
    rows.filter((r) => policy(param(r, 'policy')) && (size === undefined || param(r, 'size') === size));
  const auto = at((p) => p === 'auto');
  const pinned = at((p) => p?.startsWith('rcvbuf') ?? false);
  if (!auto.length || !pinned.length) return undefined;
  const mean = (rs: ResultRow[], f: (r: ResultRow) => number | undefined) => {
    const v = rs.map(f).filter((x): x is number => x !== undefined);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : undefined;
  };
  const a = mean(auto, mibPerSecond);
  const b = mean(pinned, mibPerSecond);
  if (!a || b === undefined) return undefined;
  const rwnd = mean(pinned, (r) => num(r, 'rwndLimitedPct'));
  const seedRatio =
    (seedValue('000-policy', 'rcvbuf pinned') ?? 0) / (seedValue('000-policy', 'auto (the fix)') ?? 1);
  const where = lab.length
    ? rttText(doc, lab)
    : 'on loopback (no RTT: the window costs nothing here; the lab shows the effect)';
  const ours = `pinned rcvbuf ${x2(b / a)} autotuned ${where}${rwnd === undefined ? '' : `, rwnd-limited ${pc(rwnd)}`}`;
  return {
    seed: '000',
    text: `seed 000: ${ours} — seed: ${x2(seedRatio)}, rwnd-limited 98–100 %`,
    ok: lab.length ? b / a < 0.75 && (rwnd === undefined || rwnd >= 90) : undefined,
  };
}

/** Seed 001: unpinned ÷ pinned per size (ping round trips, else tcp messages). */
function seed001(doc: ResultsDocument): Verdict | undefined {
  const lab = rowsOf(doc, 'ping', 'lab');
  const rows = lab.length ? lab : rowsOf(doc, 'ping', 'local');
  const rate = (r: ResultRow) => firstNum(r, ['roundTripsPerSecond', 'requestsPerSecond']);
  const sizes = [...new Set(rows.map((r) => param(r, 'size')).filter((s) => s !== undefined))];
  const ratios: string[] = [];
  let last: number | undefined;
  for (const size of sizes) {
    const same = rows.filter(
      (r) =>
        param(r, 'size') === size && (param(r, 'inflight') ?? '1') === (param(rows[0], 'inflight') ?? '1'),
    );
    const a = same.find((r) => param(r, 'policy') === 'auto');
    const b = same.find((r) => isPinned(param(r, 'policy')));
    const ra = a && rate(a);
    const rb = b && rate(b);
    if (ra && rb) {
      last = ra / rb;
      const s = seedValue('001-ping', Number(size));
      ratios.push(`${size} B ${x2(last)}${s === undefined ? '' : ` (seed ${x2(s)})`}`);
    }
  }
  if (!ratios.length) return undefined;
  const where = lab.length ? rttText(doc, lab) : 'on loopback';
  return {
    seed: '001',
    text: `seed 001: ping unpinned ÷ pinned ${where}: ${ratios.join(', ')} — seed at 1.61 ms`,
    ok: lab.length && last !== undefined ? last > 1 : undefined,
  };
}

/** Seed 002: the adaptive reader against node's 'data' and a fixed 8 KiB buffer, and the knee. */
function seed002(doc: ResultsDocument): Verdict | undefined {
  const rows = rowsOf(doc, 'drain');
  const by = (name: (r: string) => boolean) => rows.find((r) => name(param(r, 'reader') ?? ''));
  const data = by((r) => r === 'data');
  const adaptive = rows
    .filter((r) => (param(r, 'reader') ?? '').startsWith('adaptive'))
    .sort((x, y) => (gbPerSecond(y) ?? 0) - (gbPerSecond(x) ?? 0))[0];
  if (!adaptive) return undefined;
  const ga = gbPerSecond(adaptive) ?? 0;
  const parts = [`${param(adaptive, 'reader')} ${ga.toFixed(2)} GB/s`];
  const gd = data && gbPerSecond(data);
  if (gd) parts.push(`${x2(ga / gd)} node 'data'`);
  const small = by((r) => /^fixed:8k/i.test(r));
  const gs = small && gbPerSecond(small);
  if (gs) parts.push(`${x2(ga / gs)} fixed 8K`);
  const seedRatio =
    (seedValue('002-drain', 'adaptive, cap 256 KB') ?? 0) /
    (seedValue('002-drain', 'fixed 8 KB (before)') ?? 1);
  return {
    seed: '002',
    text: `seed 002: ${parts.join(' = ')} — seed: 7.5 vs 4.2 GB/s = ${x2(seedRatio)} fixed 8 KB, 1 MB cap ~6.0 GB/s`,
    ok: gd ? ga / gd >= 1.3 : undefined,
  };
}

/** Seed 003: packets per batch with one socket against many, on the plain batch path. */
function seed003(doc: ResultsDocument): Verdict | undefined {
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

/** Seed 004: loss per receive path at the top rate, and the highest loss-free rates against node:dgram's. */
function seed004(doc: ResultsDocument): Verdict | undefined {
  const rows = rowsOf(doc, 'udp');
  if (!rows.length) return undefined;
  const ladder = rows.filter((r) => !isFindMax(r));
  const max = rows.filter(isFindMax);
  const parts: string[] = [];
  const seedTop = seedValue('004-loss', 100000) ?? 0;
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
  const batch = rate('batch');
  return {
    seed: '004',
    text: `seed 004: ${parts.join('; ')} — seed: ${pc(seedTop)} dropped at 100 000/s (really ~45 714/s), 7.3 % at 100/s`,
    ok: dgram && batch ? batch / dgram >= 1.5 : undefined,
  };
}

const BY_SEED: Record<SeedId, (doc: ResultsDocument) => Verdict | undefined> = {
  '000': seed000,
  '001': seed001,
  '002': seed002,
  '003': seed003,
  '004': seed004,
};

/** The verdict lines that the results support, seed by seed. */
export function verdicts(doc: ResultsDocument): Verdict[] {
  return (Object.keys(BY_SEED) as SeedId[]).map((s) => BY_SEED[s](doc)).filter((v): v is Verdict => !!v);
}
