// Issue 43, item 5: seed 000 on osiris itself. A two-node RabbitMQ cluster across a lab at 2 ms
// (scripts/lib/rabbitmq-cluster.ts: Debian's rabbitmq-server, node 1 in the server namespace, node 2 in
// the client namespace), net.core.rmem_max = wmem_max = 229376 (the thread's stock value, through
// src/lab/sysctls.ts), a stream queue declared through node 1 and published to with confirms for a
// few seconds from its namespace: osiris replicates node 1 → node 2 on sockets it pins itself
// (replica_recbuf 2041500 on the follower's accepted socket, replica_sndbuf 1469880 on the leader's),
// which the kernel clamps to 2 × rmem_max. `sockbuf inspect` in the follower's namespace must flag the
// replica socket pinned-rcvbuf, by beam.smp, at the ceiling (net.core.rmem_max and its value) and
// set by osiris (replica_recbuf), never RabbitMQ's tcp_listen_options (which does not govern it); in
// the leader's namespace its socket rwnd-limited, its own send buffer at 2 × wmem_max named with
// replica_sndbuf. Afterwards the sysctls are what they were and every
// node, epmd, namespace and temp dir is gone, whether it passed or not.
// Slow, real system: 60–100 s here (two nodes start in ~30 s on two shared CPUs, the join ~5 s, 6 s
// of publishing, inspect's start, the stop); the timeout is 180 s. Skips when not root, without
// rabbitmq-server, or while another live process has a host sysctl change pending. Serialised with
// the other tests (scripts/run-tests.mjs runs one file at a time).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { followerSocket, leaderSocket, side, watchIn } from '../../scripts/lib/osiris-measure.js';
import { rabbitmqMissing, startClient } from '../../scripts/lib/rabbitmq.js';
import { type Cluster, startCluster } from '../../scripts/lib/rabbitmq-cluster.js';
import { cleanStale, withLab } from '../../src/lab/lab.js';
import { changeSysctls, liveSysctlChanges, restoreSysctls } from '../../src/lab/sysctls.js';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { alive } from '../../src/sys/process.js';
import { readSysctlText } from '../../src/sys/sysctl.js';

const STOCK = 229376;
const SYSCTLS = ['net.core.rmem_max', 'net.core.wmem_max'];
const skip =
  process.getuid?.() !== 0
    ? 'needs root (a lab, the host sysctls)'
    : (rabbitmqMissing() ?? (existsSync('/dev/net/tun') ? false : 'needs /dev/net/tun (the lab)'));
const log = (msg: string) => process.stderr.write(`# ${msg}\n`);

const show = (rows: (InspectedSocket | undefined)[]) =>
  JSON.stringify(
    rows.map((r) =>
      r
        ? {
            local: `${r.localAddress}:${r.localPort}`,
            remote: `${r.remoteAddress}:${r.remotePort}`,
            command: r.command,
            rb: r.rcvbufBytes,
            tb: r.sndbufBytes,
            wscale: [r.rcvWscale, r.sndWscale],
            rwnd: r.rwndLimitedPct,
            flags: r.flags,
          }
        : r,
    ),
    null,
    1,
  );

/** This process's leftovers: its lab namespaces, brokers' temp dirs, the pids it started. */
function leftovers(pids: number[]): string[] {
  const out: string[] = [];
  const netns = existsSync('/run/netns') ? readdirSync('/run/netns') : [];
  out.push(...netns.filter((n) => n.startsWith(`sbl-${process.pid}-`)).map((n) => `netns ${n}`));
  out.push(
    ...readdirSync(tmpdir())
      .filter((d) => d.startsWith(`sockbuf-rabbitmq-${process.pid}-`))
      .map((d) => `dir ${d}`),
  );
  out.push(...pids.filter(alive).map((p) => `pid ${p} still runs`));
  return out;
}

test('osiris across a lab at rmem_max = wmem_max = 229376: inspect names the clamp and replica_recbuf on the follower, rwnd-limited on the leader', {
  skip,
  timeout: 180_000,
}, async (t) => {
  cleanStale(); // what a killed run left, its sysctls too
  const live = liveSysctlChanges();
  if (live.length) {
    t.skip(
      `another live process has a host sysctl change pending (pid ${live.map((s) => s.pid).join(', ')})`,
    );
    return;
  }
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  const before = SYSCTLS.map((n) => readSysctlText(n));
  const pids: number[] = [];
  let follower: InspectedSocket[][] = [];
  let leader: InspectedSocket[][] = [];
  let addresses = { leader: '', follower: '' };
  try {
    changeSysctls(Object.fromEntries(SYSCTLS.map((n) => [n, STOCK])));
    await withLab({ rttMs: 2 }, async (lab) => {
      const { hosts } = lab.info;
      addresses = { leader: hosts.server.ipv4, follower: hosts.client.ipv4 };
      let cluster: Cluster | undefined;
      try {
        cluster = await startCluster(lab.info);
        pids.push(cluster.leader.pid, cluster.leader.epmdPid, cluster.follower.pid, cluster.follower.epmdPid);
        log(`cluster up at ${since()}: ${cluster.leader.nodename} and ${cluster.follower.nodename}`);
        const seconds = 6;
        const fw = watchIn(lab, 'client', seconds + 6);
        const lw = watchIn(lab, 'server', seconds + 6);
        const pub = startClient('publish', {
          url: cluster.leader.url,
          queue: 'seed000',
          kib: 128,
          count: 10_000_000,
          seconds,
          wrap: ['ip', 'netns', 'exec', hosts.server.netns],
          type: 'stream',
          unconfirmed: 64,
        });
        pids.push(pub.pid);
        try {
          const r = await pub.done;
          log(`published ${r.messages} messages at ${r.MBps.toFixed(1)} MB/s (${since()})`);
        } finally {
          await pub.stop();
          await Promise.all([fw.stop(), lw.stop()]);
          follower = fw.samples;
          leader = lw.samples;
        }
      } finally {
        await cluster?.stop();
      }
    });
  } finally {
    restoreSysctls();
  }
  // everything gone and put back, before what inspect said is judged
  assert.deepEqual(
    SYSCTLS.map((n) => readSysctlText(n)),
    before,
    'rmem_max/wmem_max restored',
  );
  assert.deepEqual(leftovers(pids), [], 'no namespace, node, epmd, client or temp dir left');

  const isFollower = followerSocket(addresses.leader);
  const isLeader = leaderSocket(addresses.follower);
  const f = side(follower, isFollower);
  const l = side(leader, isLeader);
  const lastF = follower.map((s) => s.find(isFollower)).filter(Boolean);
  const lastL = leader.map((s) => s.find(isLeader)).filter(Boolean);
  log(`follower's replica socket: ${show(lastF.slice(-2))}`);
  log(`leader's replica socket: ${show(lastL.slice(-2))}`);
  assert.ok(f.samples > 0, `the follower's replica socket (local port 6000–6500) in inspect: ${f.samples}`);
  assert.equal(f.command, 'beam.smp');
  assert.equal(f.rb, 2 * STOCK, "the follower's receive buffer at the ceiling: 2 × rmem_max");
  assert.ok((f.rcvWscale ?? 99) <= 4, `window scale ${f.rcvWscale}`);
  const reason = f.reasons['pinned-rcvbuf'];
  assert.ok(reason, `pinned-rcvbuf on the follower's replica socket: ${JSON.stringify(f.flagCounts)}`);
  // the clamp, named: the sysctl with its value; the setter: osiris's replica_recbuf; not RabbitMQ's listener knob
  assert.match(reason, /net\.core\.rmem_max/, reason);
  assert.match(reason, /229376|224 KiB/, reason);
  assert.match(reason, /replica_recbuf/, reason);
  assert.doesNotMatch(reason, /tcp_listen_options/, reason);
  // the leader's side: rwnd-limited by that window
  assert.ok(l.samples > 0, "the leader's replica socket in inspect");
  assert.equal(l.command, 'beam.smp');
  const lr = l.reasons['rwnd-limited'];
  assert.ok(lr, `the leader's replica socket rwnd-limited: ${JSON.stringify(l.flagCounts)}`);
  // its own send buffer sits at its ceiling too: 2 × wmem_max, set by osiris's replica_sndbuf
  assert.equal(l.tb, 2 * STOCK, "the leader's send buffer at the ceiling: 2 × wmem_max");
  assert.match(lr, /net\.core\.wmem_max/, lr);
  assert.match(lr, /replica_sndbuf/, lr);
  assert.doesNotMatch(lr, /tcp_listen_options/, lr);
  log(`done at ${since()}`);
});
