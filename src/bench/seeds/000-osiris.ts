// Seed 000: RabbitMQ's osiris asked for SO_RCVBUF/SO_SNDBUF on its replication sockets, which locks
// the buffers and clamps them to rmem_max/wmem_max. Measured again by the tcp scenario on loopback and
// across the lab at 2 ms, and by the rmem_max/wmem_max sweep. Pure.
import { type ChartPair, clean, grouped, type SourceFigure } from '../report/charts.js';
import {
  firstNum,
  labRttMs,
  num,
  param,
  type ResultRow,
  type ResultsDocument,
  rowsOf,
  type SeedVerdict,
} from '../report/results.js';
import { mibPerSecond } from '../report/views.js';
import { judge, pc, type Seed, x2 } from './seed.js';

const policy: SourceFigure = {
  id: '000-policy',
  title: 'Replication throughput per buffer policy',
  source:
    'seed 000, "Testing": m7g.16xlarge 3-node cluster, 8192 B messages, 4 × 60 s runs, mean MiB/s; ' +
    'rcvbuf asked 2041500 and sndbuf 1469880, both clamped to 229376',
  x: 'policy',
  y: 'MiB/s',
  xScale: 'category',
  series: [
    {
      name: 'MiB/s',
      points: [
        ['auto (the fix)', 561.1],
        ['rcvbuf pinned', 285.6],
        ['sndbuf pinned', 508.2],
      ],
    },
  ],
};

const rwnd: SourceFigure = {
  id: '000-rwnd',
  title: 'Sender rwnd-limited share, ss mid-run',
  source: "seed 000, ss on the leader's replication sockets: rwnd_limited (ranges given as their middle)",
  x: 'policy',
  y: 'rwnd-limited %',
  xScale: 'category',
  series: [
    {
      name: 'rwnd-limited %',
      points: [
        ['auto (the fix)', 0],
        ['rcvbuf pinned', 99],
        ['sndbuf pinned', 0],
      ],
    },
  ],
};

const sweep: SourceFigure = {
  id: '000-sweep',
  title: 'Throughput vs rmem_max/wmem_max, unpatched (buffers requested)',
  source: 'seed 000, sysctl table: three c6gn.xlarge clients, one stream, mean MiB/s',
  x: 'rmem_max = wmem_max (bytes)',
  y: 'MiB/s',
  xScale: 'log',
  series: [
    {
      name: 'MiB/s',
      points: [
        [229376, 378.1],
        [524288, 567.5],
        [1048576, 579.0],
        [2097152, 579.8],
        [4194304, 580.7],
        [8388608, 581.3],
        [16777216, 580.4],
        [33554432, 581.1],
        [67108864, 580.1],
      ],
    },
  ],
};

function rttText(doc: ResultsDocument, rows: ResultRow[]): string {
  const ms = labRttMs(doc, rows[0]);
  return ms === undefined ? 'across the lab' : `at ${ms} ms`;
}

/** Pinned rcvbuf ÷ autotuned, and the pinned run's rwnd-limited share; judged across the lab. */
function verdict(doc: ResultsDocument): SeedVerdict | undefined {
  const lab = rowsOf(doc, 'tcp', 'lab');
  const rows = lab.length ? lab : rowsOf(doc, 'tcp', 'local');
  const size = rows.some((r) => param(r, 'size') === '8192') ? '8192' : undefined;
  const at = (p: (s: string | undefined) => boolean) =>
    rows.filter((r) => p(param(r, 'policy')) && (size === undefined || param(r, 'size') === size));
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
  const rw = mean(pinned, (r) => num(r, 'rwndLimitedPct'));
  const where = lab.length ? rttText(doc, lab) : 'on loopback (no RTT: the window costs nothing here)';
  const ours = `pinned rcvbuf ${x2(b / a)} autotuned ${where}${rw === undefined ? '' : `, rwnd-limited ${pc(rw)}`}`;
  const figures = `${ours}; seed: ${x2(285.6 / 561.1)}, rwnd-limited 98–100 %`;
  if (!lab.length) return judge(seed000, figures, undefined, 'judged across the lab, which did not run');
  return judge(seed000, figures, b / a <= 0.6 && rw !== undefined && rw >= 90);
}

function charts(doc: ResultsDocument): ChartPair[] {
  const out: ChartPair[] = [];
  for (const placement of ['lab', 'local']) {
    const rows = rowsOf(doc, 'tcp', placement);
    if (!rows.length) continue;
    const where = placement === 'lab' ? 'across the lab' : 'on loopback';
    const ours = grouped(
      `tcp-${placement}`,
      `TCP throughput per policy × size, ${where}`,
      rows,
      'size',
      'policy',
      mibPerSecond,
      ['message size (bytes)', 'MiB/s'],
    );
    if (placement === 'local')
      ours.caption =
        'Loopback has no round-trip time: a window of 224 KiB is never the limit here, so a pinned buffer ' +
        'costs nothing (it can even be faster: less memory to touch). The effect needs an RTT: see the ' +
        'lab at 2 ms.';
    out.push({ ours, seed: policy });
    const labToo = placement === 'local' && rowsOf(doc, 'tcp', 'lab').length > 0;
    if (!labToo && rows.some((r) => num(r, 'rwndLimitedPct') !== undefined)) {
      out.push({
        ours: grouped(
          `rwnd-${placement}`,
          `Sender rwnd-limited share, ${where}`,
          rows,
          'size',
          'policy',
          (r) => num(r, 'rwndLimitedPct'),
          ['message size (bytes)', 'rwnd-limited %'],
        ),
        seed: rwnd,
      });
    }
  }
  const points = rowsOf(doc, 'sysctl-sweep');
  if (points.length) {
    out.push({
      ours: {
        id: 'sysctl-sweep',
        title: 'Throughput vs rmem_max/wmem_max across the lab',
        type: 'line',
        xTitle: 'rmem_max = wmem_max (bytes)',
        yTitle: 'MiB/s',
        xLog: true,
        datasets: [
          {
            label: 'MiB/s',
            data: points
              .map((r) => ({
                x: firstNum(r, ['rmemMax', 'value']) ?? Number.NaN,
                y: clean(mibPerSecond(r)) ?? Number.NaN,
              }))
              .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)),
          },
        ],
      },
      seed: sweep,
    });
  }
  return out;
}

export const seed000: Seed = {
  id: '000',
  title: 'osiris: setting recbuf/sndbuf turns autotuning off',
  thread:
    'rabbitmq/osiris pull request "Avoid setting recbuf/sndbuf in replica(_reader) processes" (the-mikedavis)',
  url: 'https://github.com/rabbitmq/osiris/pulls?q=is%3Apr+recbuf+sndbuf',
  finding:
    'Asking for SO_RCVBUF locks the buffer (SOCK_RCVBUF_LOCK) and clamps it to rmem_max (224 KiB): ' +
    'throughput halves and the sender is receive-window-limited 98–100 % of the time. ' +
    'Left alone, the kernel grows the buffer past rmem_max.',
  criterion:
    'across the lab, pinned rcvbuf ≤ 0.6 × autotuned with the sender rwnd-limited ≥ 90 % of the time',
  figures: [policy, rwnd, sweep],
  entries: [
    {
      id: 'tcp',
      title: 'TCP bulk per policy × size on loopback (seeds 000, 001)',
      seed: '000',
      scenario: 'tcp',
      quick: ['--policies', 'auto,rcvbuf=229376,sndbuf=229376', '--sizes', '16000', '--duration', '1s'],
      full: [],
      repeat: { quick: 1, full: 3 },
      placement: 'local',
      issue: 4,
    },
    {
      id: 'tcp-lab',
      title: "seed 000's table across the lab at 2 ms RTT",
      seed: '000',
      scenario: 'tcp',
      quick: ['--policies', 'auto,rcvbuf=229376,sndbuf=229376', '--sizes', '8192', '--duration', '3s'],
      full: ['--policies', 'auto,rcvbuf=229376,sndbuf=229376', '--sizes', '8192', '--duration', '10s'],
      repeat: { quick: 1, full: 3 },
      placement: 'lab',
      lab: 'rtt=2ms,bandwidth=5gbit',
      issue: 6,
    },
    {
      id: 'sysctl-sweep',
      title: "seed 000's rmem_max/wmem_max sweep across the lab (changes host sysctls, restored)",
      seed: '000',
      scenario: 'sysctl-sweep',
      quick: ['--values', '229376,1M,4M', '--duration', '2s', '--yes'],
      full: ['--yes'],
      // twice, so that the table has the thread's CV column (it runs only with --yes)
      repeat: { quick: 2, full: 3 },
      placement: 'lab',
      lab: 'rtt=2ms,bandwidth=5gbit',
      issue: 6,
      changesHost: true,
    },
  ],
  tables: ['tcp', 'sysctl-sweep'],
  verdict,
  charts,
};
