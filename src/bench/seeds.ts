// The seeds' own figures (shared/seeds/*.txt), as data: the report draws each one beside the chart
// that measures it again, and the verdict lines quote them. One line of source per figure. Pure data.

export type SeedId = '000' | '001' | '002' | '003' | '004';

export interface SeedSeries {
  name: string;
  /** [x, y]: x is a category label or a number (a size, a rate), y the figure. */
  points: [string | number, number][];
}

export interface SeedFigure {
  id: string;
  seed: SeedId;
  title: string;
  /** Where the numbers come from, in one line. */
  source: string;
  x: string;
  y: string;
  /** 'category' draws bars, 'log' a line over a logarithmic x axis. */
  xScale: 'category' | 'log';
  series: SeedSeries[];
}

export interface SeedInfo {
  seed: SeedId;
  title: string;
  /** What the seed found, in a sentence or two. */
  finding: string;
}

export const SEEDS: SeedInfo[] = [
  {
    seed: '000',
    title: 'osiris: setting recbuf/sndbuf turns autotuning off',
    finding:
      'Asking for SO_RCVBUF locks the buffer (SOCK_RCVBUF_LOCK) and clamps it to rmem_max (224 KiB): ' +
      'throughput halves and the sender is receive-window-limited 98–100 % of the time. ' +
      'Left alone, the kernel grows the buffer past rmem_max.',
  },
  {
    seed: '001',
    title: 'RocketMQ: fixed SO_SNDBUF/SO_RCVBUF decrease throughput greatly',
    finding:
      'Removing the fixed buffers made a remoting ping 0.93× (250 B) to 7.93× (100 kB) as fast at 1.61 ms ' +
      'latency: the bigger the message, the more a pinned window costs.',
  },
  {
    seed: '002',
    title: 'Erlang/OTP: adapt the socket read buffer to traffic',
    finding:
      'Draining a bulk stream through a fixed 8 KB read buffer: 4.2 GB/s; growing it on full reads (cap ' +
      '256 KB): ~7.5 GB/s; a 1 MB cap is slower (~6.0 GB/s) — the knee is at 64–128 KB.',
  },
  {
    seed: '003',
    title: 'agave: 1 receive socket instead of 8',
    finding:
      'Eight sockets competing for the same packets gave 1.16 packets per batch; one socket with recvmmsg ' +
      'and a 1 ms coalesce window gave ~3.5, and ~20 % less time per packet.',
  },
  {
    seed: '004',
    title: 'UDP receive drops from 100 messages/s',
    finding:
      'A receiver reading one datagram per call dropped 7 % at 100/s, 25 % at 1000/s, 39 % at 10 000/s and ' +
      '96 % at 100 000/s; even netcat lost 62 % at the top rate.',
  },
];

export const SEED_FIGURES: SeedFigure[] = [
  {
    id: '000-policy',
    seed: '000',
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
  },
  {
    id: '000-rwnd',
    seed: '000',
    title: 'Sender rwnd-limited share, ss mid-run',
    source: "seed 000, ss on the leader's replication sockets: rwnd_limited (ranges given as their middle)",
    x: 'policy',
    y: 'rwnd-limited %',
    xScale: 'category',
    series: [
      {
        name: 'rwnd_limited %',
        points: [
          ['auto (the fix)', 0],
          ['rcvbuf pinned', 99],
          ['sndbuf pinned', 0],
        ],
      },
    ],
  },
  {
    id: '000-sweep',
    seed: '000',
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
  },
  {
    id: '001-ping',
    seed: '001',
    title: 'Remoting ping: unpinned ÷ pinned, per body size',
    source: 'seed 001: RocketMQ remoting ping, 1.61 ms latency, new version (no SO_*BUF) ÷ 4.9.2',
    x: 'body size (bytes)',
    y: '× of pinned',
    xScale: 'category',
    series: [
      {
        name: 'unpinned ÷ pinned',
        points: [
          [250, 0.93],
          [4000, 3.85],
          [16000, 6.07],
          [100000, 7.93],
        ],
      },
    ],
  },
  {
    id: '001-producer',
    seed: '001',
    title: 'Single producer tps, old (pinned) vs new (unpinned)',
    source: 'seed 001, "Single producer/broker test": 400 threads, sync send, 1.61 ms latency',
    x: 'body size (bytes)',
    y: 'tps',
    xScale: 'category',
    series: [
      {
        name: 'old (pinned)',
        points: [
          [250, 88000],
          [4000, 18200],
          [16000, 4860],
          [100000, 750],
        ],
      },
      {
        name: 'new (auto)',
        points: [
          [250, 82000],
          [4000, 70000],
          [16000, 29500],
          [100000, 5950],
        ],
      },
    ],
  },
  {
    id: '002-drain',
    seed: '002',
    title: 'Bulk drain GB/s vs read-buffer cap',
    source: 'seed 002: 4 GiB over loopback on an M2 Pro; 128 KB and 256 KB "7.4–7.6", 1 MB "~6.0"',
    x: 'read buffer',
    y: 'GB/s',
    xScale: 'category',
    series: [
      {
        name: 'GB/s',
        points: [
          ['fixed 8 KB (before)', 4.2],
          ['adaptive, cap 128 KB', 7.5],
          ['adaptive, cap 256 KB', 7.5],
          ['adaptive, cap 1 MB', 6.0],
        ],
      },
    ],
  },
  {
    id: '003-batch',
    seed: '003',
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
  },
  {
    id: '004-loss',
    seed: '004',
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
  },
];

/** A seed figure's value by figure id, series name (or the first series) and x. */
export function seedValue(figureId: string, x: string | number, series?: string): number | undefined {
  const f = SEED_FIGURES.find((g) => g.id === figureId);
  const s = series === undefined ? f?.series[0] : f?.series.find((t) => t.name === series);
  return s?.points.find((p) => p[0] === x)?.[1];
}
