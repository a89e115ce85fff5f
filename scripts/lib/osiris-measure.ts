// One row of scripts/osiris-lab.ts: a fresh two-node cluster across the lab (rabbitmq-cluster.ts),
// `sockbuf inspect --tcp --json --watch 1s` in both namespaces, amqplib publishing with confirms to a
// stream from the leader's namespace for WARM_UP + `seconds` (MB/s: the mean of the per-second figures
// after the warm-up), then everything stopped. What the replica
// connection looked like on each side: the follower's accepted socket (local port in osiris's
// port_range) and the leader's connecting one (remote port in it).
import type { Lab } from '../../src/lab/lab.js';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { startClient } from './rabbitmq.js';
import { isReplicaPort, startCluster } from './rabbitmq-cluster.js';

export type Osiris = 'patched' | 'debian';
/** Seconds of each publish left out of the figures: the stream's start and the windows' growth. */
export const WARM_UP = 2;

/** One end of the replica connection as inspect saw it over the publish. */
export interface Side {
  /** Samples that held the socket, and those in which it was busy (sent, on the leader). */
  samples: number;
  busy: number;
  command?: string;
  localPort?: number;
  rb?: number;
  tb?: number;
  rcvWscale?: number;
  sndWscale?: number;
  /** Mean (min, max) over the busy samples, percent. */
  rwnd?: [number, number, number];
  sndbuf?: [number, number, number];
  /** Each kind inspect flagged the socket with, in how many samples; its reason in the last of them. */
  flagCounts: Record<string, number>;
  reasons: Record<string, string>;
  /** Every other flagged socket of that namespace: `kind (command local→remote)`. */
  others: string[];
}

export interface Measured {
  osiris: Osiris;
  value: number;
  run: number;
  MBps?: number;
  perSecondMBps: number[];
  error?: string;
  follower: Side;
  leader: Side;
  summary: string;
}

/**
 * `sockbuf inspect --watch 1s` in a namespace of the lab, `count` samples of every TCP socket there:
 * the built CLI at `cli`, or (without) this checkout's sockbuf (dist, or the sources under tsx).
 */
export function watchIn(lab: Lab, host: 'client' | 'server', count: number, cli?: string) {
  const samples: InspectedSocket[][] = [];
  const inspect = ['inspect', '--tcp', '--json', '--watch', '1s', '--count', String(count)];
  const argv = cli ? [process.execPath, cli, ...inspect] : ['sockbuf', ...inspect];
  const child = lab.spawn(host, argv);
  child.onLine((l) => {
    if (l.startsWith('{')) samples.push((JSON.parse(l) as { sockets: InspectedSocket[] }).sockets);
  });
  const bound = setTimeout(() => child.signal('SIGKILL'), count * 1000 + 30_000);
  return {
    samples,
    async stop() {
      clearTimeout(bound);
      await child.stop();
    },
  };
}

const stats = (xs: number[]): [number, number, number] | undefined =>
  xs.length
    ? [Math.round((10 * xs.reduce((a, b) => a + b, 0)) / xs.length) / 10, Math.min(...xs), Math.max(...xs)]
    : undefined;

/** One end over the samples: sizes from the busiest sample, shares over the busy ones, flags in all. */
export function side(samples: InspectedSocket[][], match: (r: InspectedSocket) => boolean): Side {
  const out: Side = { samples: 0, busy: 0, flagCounts: {}, reasons: {}, others: [] };
  let best: InspectedSocket | undefined;
  const rwnd: number[] = [];
  const sndbuf: number[] = [];
  const others = new Set<string>();
  for (const all of samples) {
    const row = all.find(match);
    for (const r of all)
      if (r !== row && r.flags.length)
        for (const f of r.flags)
          others.add(`${f.kind} (${r.command ?? '?'} ${r.localPort}→${r.remoteAddress}:${r.remotePort})`);
    if (!row) continue;
    out.samples++;
    for (const f of row.flags) {
      out.flagCounts[f.kind] = (out.flagCounts[f.kind] ?? 0) + 1;
      out.reasons[f.kind] = f.reason;
    }
    if ((row.busyMs ?? 0) > 0 && row.intervalSeconds !== undefined) {
      out.busy++;
      if (row.rwndLimitedPct !== undefined) rwnd.push(row.rwndLimitedPct);
      if (row.sndbufLimitedPct !== undefined) sndbuf.push(row.sndbufLimitedPct);
    }
    if (!best || (row.busyMs ?? 0) >= (best.busyMs ?? 0)) best = row;
  }
  if (best) {
    out.command = best.command;
    out.localPort = best.localPort;
    out.rb = best.rcvbufBytes;
    out.tb = best.sndbufBytes;
    out.rcvWscale = best.rcvWscale;
    out.sndWscale = best.sndWscale;
  }
  out.rwnd = stats(rwnd);
  out.sndbuf = stats(sndbuf);
  out.others = [...others];
  return out;
}

/** The follower's replica socket (accepted on osiris's port range, from the leader's address). */
export const followerSocket = (leaderAddress: string) => (r: InspectedSocket) =>
  r.state === 'established' && isReplicaPort(r.localPort) && r.remoteAddress === leaderAddress;
/** The leader's replica socket (osiris_replica_reader's, connected to the follower's port range). */
export const leaderSocket = (followerAddress: string) => (r: InspectedSocket) =>
  r.state === 'established' && isReplicaPort(r.remotePort) && r.remoteAddress === followerAddress;

export async function measure(
  lab: Lab,
  cli: string,
  o: {
    osiris: Osiris;
    value: number;
    run: number;
    seconds: number;
    kib: number;
    unconfirmed: number;
    patched?: string;
  },
): Promise<Measured> {
  const { hosts } = lab.info;
  const cluster = await startCluster(lab.info, { patched: o.patched });
  const out: Measured = {
    osiris: o.osiris,
    value: o.value,
    run: o.run,
    perSecondMBps: [],
    follower: side([], () => false),
    leader: side([], () => false),
    summary: '',
  };
  const count = o.seconds + WARM_UP + 8;
  const follower = watchIn(lab, 'client', count, cli);
  const leader = watchIn(lab, 'server', count, cli);
  try {
    const pub = startClient('publish', {
      url: cluster.leader.url,
      queue: 'seed000',
      kib: o.kib,
      count: 10_000_000,
      seconds: o.seconds + WARM_UP,
      wrap: ['ip', 'netns', 'exec', hosts.server.netns],
      type: 'stream',
      unconfirmed: o.unconfirmed,
    });
    try {
      const r = await pub.done;
      // the whole seconds after the warm-up (the publisher's total includes the stream's start)
      out.perSecondMBps = r.perSecondMBps.slice(WARM_UP);
      const n = out.perSecondMBps.length;
      out.MBps = n ? out.perSecondMBps.reduce((a, b) => a + b, 0) / n : r.MBps;
    } catch (err) {
      out.error = (err as Error).message.split('\n')[0];
      await pub.stop();
    }
  } finally {
    await Promise.all([follower.stop(), leader.stop()]);
    await cluster.stop();
  }
  out.follower = side(follower.samples, followerSocket(hosts.server.ipv4));
  out.leader = side(leader.samples, leaderSocket(hosts.client.ipv4));
  const f = out.follower;
  const l = out.leader;
  out.summary = `${out.MBps?.toFixed(1) ?? `— (${out.error})`} MB/s [${out.perSecondMBps.map((x) => x.toFixed(0)).join(' ')}]; follower rb ${f.rb ?? '—'} wscale ${f.rcvWscale ?? '—'} flags ${JSON.stringify(f.flagCounts)}; leader tb ${l.tb ?? '—'} rwnd ${l.rwnd?.[0] ?? '—'} % sndbuf ${l.sndbuf?.[0] ?? '—'} % flags ${JSON.stringify(l.flagCounts)}`;
  return out;
}
