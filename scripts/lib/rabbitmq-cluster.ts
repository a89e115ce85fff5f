// A two-node RabbitMQ cluster across a sockbuf lab, for seed 000 on osiris itself (issue 43): stream
// replication between the lab's two namespaces. Each node is a broker of scripts/lib/rabbitmq.ts in
// its own namespace with its own files, epmd and distribution on the lab address (port 4369 and 25672
// in each namespace), node names rabbit@<lab address> (RABBITMQ_USE_LONGNAME=true), one Erlang cookie
// through a shared HOME. The follower joins with `rabbitmqctl stop_app; join_cluster; start_app`.
//
//   const cluster = await startCluster(lab.info, { patched });   // ready, or it throws (and stopped)
//   try { … publish to a stream at cluster.leader.url from the server namespace … }
//   finally { await cluster.stop(); }                              // both nodes, epmds, files; idempotent
//
// leader: the node in the lab's server namespace (a stream declared through it has its leader there:
//   the default queue-leader-locator is client-local); follower: the node in the client namespace.
// patched: a directory with osiris_replica.beam and osiris_replica_reader.beam (osirisUnpinned), hot-
//   loaded into both nodes after the join with code:load_abs (`-pa` does not win over RabbitMQ's plugin
//   path); checked with code:which. Osiris's replica ports: its port_range, 6000–6500 by default.
// osirisUnpinned(dir): seed 000's fix built from the installed broker's own beams (their debug_info),
//   the recbuf/sndbuf options removed by scripts/lib/osiris-unpin.escript, compiled with erlc.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Broker, labNetns, RABBITMQ_SERVER, removeAtExit, startBroker } from './rabbitmq.js';

/** Osiris's replica port range (its default port_range). */
export const REPLICA_PORTS = { min: 6000, max: 6500 } as const;
export const isReplicaPort = (p: number) => p >= REPLICA_PORTS.min && p <= REPLICA_PORTS.max;
const MODULES = ['osiris_replica', 'osiris_replica_reader'];
const UNPIN = fileURLToPath(new URL('./osiris-unpin.escript', import.meta.url));

interface LabLike {
  hosts: Record<'client' | 'server', { netns: string; ipv4: string }>;
}

export interface Cluster {
  leader: Broker;
  follower: Broker;
  /** Whether the unpinned replica modules were loaded into both nodes. */
  patched: boolean;
  stop(): Promise<void>;
}

/** The installed broker's osiris ebin directory (osiris-<version>), or why there is none. */
export function osirisEbin(): { dir: string; version: string } {
  const plugins = join(RABBITMQ_SERVER, '../../lib');
  for (const server of existsSync(plugins) ? readdirSync(plugins) : []) {
    const dir = join(plugins, server, 'plugins');
    for (const p of existsSync(dir) ? readdirSync(dir) : []) {
      const m = /^osiris-(.+)$/.exec(p);
      if (m && existsSync(join(dir, p, 'ebin/osiris_replica.beam')))
        return { dir: join(dir, p, 'ebin'), version: m[1] };
    }
  }
  throw new Error(`no osiris plugin under ${plugins} (Debian package rabbitmq-server)`);
}

/**
 * Seed 000's fix from the installed beams: osiris_replica and osiris_replica_reader without their
 * recbuf/sndbuf options, as .erl (from debug_info) and .beam (erlc) in `dir`. Returns what was removed.
 */
export function osirisUnpinned(dir: string): string[] {
  const { dir: ebin } = osirisEbin();
  const out = execFileSync('escript', [UNPIN, ebin, dir], { encoding: 'utf8', timeout: 60_000 });
  execFileSync('erlc', ['-o', dir, ...MODULES.map((m) => join(dir, `${m}.erl`))], {
    timeout: 120_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  for (const m of MODULES)
    if (!existsSync(join(dir, `${m}.beam`))) throw new Error(`erlc wrote no ${m}.beam in ${dir}`);
  return out.trim().split('\n');
}

/** Throws with rabbitmqctl's output unless it succeeded. */
async function ctlOk(b: Broker, args: string[], timeoutMs?: number): Promise<string> {
  const r = await b.ctl(args, timeoutMs);
  if (r.code !== 0)
    throw new Error(`rabbitmqctl -n ${b.nodename} ${args.join(' ')}: exit ${r.code}: ${r.out}`);
  return r.out;
}

/** Loads the unpinned modules into a running node; checks code:which names them. */
async function hotLoad(b: Broker, patched: string): Promise<void> {
  const mods = `[${MODULES.join(', ')}]`;
  const expr = `[begin code:purge(M), {module, M} = code:load_abs(filename:join("${patched}", M)), code:which(M) end || M <- ${mods}].`;
  const out = await ctlOk(b, ['eval', expr]);
  for (const m of MODULES)
    if (!out.includes(join(patched, `${m}.beam`)))
      throw new Error(`${b.nodename}: ${m} not loaded from ${patched}: ${out}`);
}

/** The two nodes up and clustered across the lab (and patched when asked); stopped if it fails. */
export async function startCluster(lab: LabLike, o: { patched?: string; readyMs?: number } = {}) {
  // the cookie: one HOME for both (removed with the cluster; its name marks it as this pid's)
  const home = mkdtempSync(join(tmpdir(), `sockbuf-rabbitmq-${process.pid}-home-`));
  const forget = removeAtExit(home);
  writeFileSync(join(home, '.erlang.cookie'), `SOCKBUF${process.pid}COOKIE${Date.now()}`, { mode: 0o400 });
  const node = (host: 'client' | 'server') => {
    const address = lab.hosts[host].ipv4;
    return startBroker({
      address,
      port: 5672,
      distPort: 25672,
      epmdPort: 4369,
      distAddress: address,
      nodename: `rabbit@${address}`,
      longnames: true,
      home,
      wrap: labNetns(lab, host),
      readyMs: o.readyMs,
    });
  };
  const started = await Promise.allSettled([node('server'), node('client')]);
  const brokers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(brokers.map((b) => b.stop()));
      rmSync(home, { recursive: true, force: true });
      forget();
    })();
    return stopping;
  };
  try {
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [leader, follower] = brokers;
    await ctlOk(follower, ['stop_app']);
    await ctlOk(follower, ['join_cluster', leader.nodename]);
    await ctlOk(follower, ['start_app'], 120_000);
    if (o.patched) for (const b of brokers) await hotLoad(b, o.patched);
    return { leader, follower, patched: !!o.patched, stop } satisfies Cluster;
  } catch (err) {
    await stop();
    throw err;
  }
}
