// scripts/osiris-lab.ts's output: seed 000's two tables with the thread's figures beside ours, the
// reasons inspect gave on the replica sockets, and the issue's "done when" checked on the rows. Pure.
import type { Measured, Side } from './osiris-measure.js';

/** The thread's figures (seed 000: m7g.16xlarge, 8192-byte messages, 60 s runs, MiB/s). */
const THREAD_1 = {
  patched: 'this change: 561.1 MiB/s; wscale 7,7; rwnd-limited 0 %; sndbuf-limited 27–33 %',
  debian: 'replica_recbuf forced: 285.6 MiB/s; wscale 2,7; rwnd-limited 98–100 %',
};
const THREAD_2: Record<number, string> = {
  229376: '378.1 MiB/s (CV 1.1 %)',
  [512 * 1024]: '567.5 MiB/s (CV 0.6 %)',
  [1024 * 1024]: '579.0 MiB/s (CV 0.1 %)',
  [2 * 1024 * 1024]: '579.8 MiB/s (CV 0.3 %)',
  [4 * 1024 * 1024]: '580.7 MiB/s (CV 0.1 %)',
  [8 * 1024 * 1024]: '581.3 MiB/s (CV 0.1 %)',
};

const sd = (xs: number[]) => {
  if (xs.length < 2) return 0;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
};
const size = (n: number | undefined) =>
  n === undefined ? '—' : n % 1024 === 0 ? `${n / 1024}K (${n})` : `${n}`;
const value = (n: number) =>
  n % (1024 * 1024) === 0
    ? `${n / 1024 / 1024} MiB`
    : n % 1024 === 0 && n !== 229376
      ? `${n / 1024} KiB`
      : `${n}`;
const mbps = (r: Measured) =>
  r.MBps === undefined
    ? `— (${r.error ?? '?'})`
    : `${r.MBps.toFixed(1)} (${Math.min(...r.perSecondMBps).toFixed(0)}–${Math.max(...r.perSecondMBps).toFixed(0)}, sd ${sd(r.perSecondMBps).toFixed(1)})`;
const share = (s: [number, number, number] | undefined) => (s ? `${s[0]} (${s[1]}–${s[2]})` : '—');
const flags = (s: Side) => {
  if (!s.samples) return 'no replica socket seen';
  const ks = Object.entries(s.flagCounts).map(([k, n]) => `${k} ${n}/${s.samples}`);
  return ks.length ? `${ks.join(', ')} (${s.command ?? '?'})` : `nothing in ${s.samples}`;
};
const cells = (r: Measured) =>
  `${mbps(r)} | ${size(r.follower.rb)} | ${size(r.leader.tb)} | ${r.follower.rcvWscale ?? '—'},${r.leader.sndWscale ?? '—'} | ${share(r.leader.rwnd)} | ${share(r.leader.sndbuf)} | ${flags(r.follower)} | ${flags(r.leader)}`;
const COLS =
  'MB/s: mean (per-second min–max, sd) | follower rb | leader tb | wscale (follower offers, leader sends with) | leader rwnd-limited % | leader sndbuf-limited % | inspect, follower namespace | inspect, leader namespace';

export function tables(rows: Measured[], stock: number): string {
  const t1 = rows.filter((r) => r.value === stock);
  const t2 = rows.filter((r) => r.osiris === 'debian').sort((a, b) => a.value - b.value || a.run - b.run);
  const n = COLS.split('|').length;
  const line = (k: number) => `|${'---|'.repeat(k)}`;
  const out = [
    `Table 1: rmem_max = wmem_max = ${stock}, the patched replica modules against Debian's pinned osiris (alternating)`,
    '',
    `| run | osiris | ${COLS} | the thread |`,
    line(n + 3),
    ...t1.map(
      (r) =>
        `| ${r.run} | ${r.osiris === 'patched' ? 'patched (no recbuf/sndbuf)' : "Debian's (pinned)"} | ${cells(r)} | ${THREAD_1[r.osiris]} |`,
    ),
    '',
    "Table 2: Debian's osiris as rmem_max = wmem_max grow",
    '',
    `| rmem_max = wmem_max | ${COLS} | the thread |`,
    line(n + 2),
    ...t2.map(
      (r) =>
        `| ${value(r.value)}${t2.filter((x) => x.value === r.value).length > 1 ? ` (run ${r.run})` : ''} | ${cells(r)} | ${THREAD_2[r.value] ?? '—'} |`,
    ),
    '',
    'What inspect said on the replica sockets (each kind, its reason in the last sample it flagged):',
  ];
  for (const r of rows)
    for (const [who, s] of [
      ['follower', r.follower],
      ['leader', r.leader],
    ] as const)
      for (const [kind, reason] of Object.entries(s.reasons))
        out.push(`- ${r.osiris} ${value(r.value)} run ${r.run}, ${who}: ${kind}: ${reason}`);
  const others = [...new Set(rows.flatMap((r) => [...r.follower.others, ...r.leader.others]))];
  out.push(
    '',
    `Other sockets inspect flagged in the two namespaces: ${others.length ? others.join('; ') : 'none'}`,
  );
  return out.join('\n');
}

/** Issue 43's "done when" for the script, checked on the rows: one line each, `met` or `NOT met`. */
export function checks(rows: Measured[], stock: number): string[] {
  const out: string[] = [];
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const pinned = rows.filter((r) => r.osiris === 'debian' && r.value === stock);
  const pinnedOk = pinned.every(
    (r) =>
      r.follower.rb === 2 * stock && (r.follower.rcvWscale ?? 99) <= 4 && (r.leader.rwnd?.[0] ?? 0) >= 50,
  );
  out.push(
    `${verdict(pinned.length > 0 && pinnedOk)}: Debian's at ${stock}: follower rb = 2 × rmem_max (${2 * stock}), window scale ≤ 4, leader rwnd-limited ≥ 50 % — ${pinned.map((r) => `run ${r.run}: rb ${r.follower.rb}, wscale ${r.follower.rcvWscale}, rwnd ${r.leader.rwnd?.[0]} %`).join('; ')}`,
  );
  const runs = [...new Set(rows.filter((r) => r.value === stock).map((r) => r.run))];
  const pairs = runs.map((run) => {
    const p = rows.find((r) => r.run === run && r.value === stock && r.osiris === 'patched');
    const d = rows.find((r) => r.run === run && r.value === stock && r.osiris === 'debian');
    return { run, p: p?.MBps, d: d?.MBps };
  });
  const faster = pairs.every((x) => x.p !== undefined && x.d !== undefined && x.p > x.d);
  if (rows.some((r) => r.osiris === 'patched'))
    // --runs 0 measures table 2 alone: no patched row, so no verdict on it
    out.push(
      `${verdict(pairs.length > 0 && faster)}: patched faster than Debian's at ${stock} in each run — ${pairs.map((x) => `run ${x.run}: ${x.p?.toFixed(1)} vs ${x.d?.toFixed(1)} MB/s (${x.p && x.d ? (x.p / x.d).toFixed(2) : '—'} ×)`).join('; ')}`,
    );
  // table 2 up to 1 MiB: each step's mean no lower than the previous by more than the larger per-second sd
  const points = [...new Set(rows.filter((r) => r.osiris === 'debian').map((r) => r.value))]
    .filter((v) => v <= 1024 * 1024)
    .sort((a, b) => a - b)
    .map((v) => {
      const rs = rows.filter((r) => r.osiris === 'debian' && r.value === v && r.MBps !== undefined);
      const means = rs.map((r) => r.MBps as number);
      return {
        v,
        mean: means.reduce((a, b) => a + b, 0) / Math.max(1, means.length),
        sd: sd(rs.flatMap((r) => r.perSecondMBps)),
      };
    });
  const steps = points
    .slice(1)
    .map((p, i) => ({ a: points[i], b: p, ok: p.mean >= points[i].mean - Math.max(p.sd, points[i].sd) }));
  out.push(
    `${verdict(points.length > 1 && steps.every((s) => s.ok))}: table 2 non-decreasing from ${stock} to 1 MiB within its spread — ${points.map((p) => `${value(p.v)}: ${p.mean.toFixed(1)} ± ${p.sd.toFixed(1)}`).join(' → ')}`,
  );
  return out;
}
