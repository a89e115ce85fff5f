// Run by pin-advice.test.ts inside `unshare -n`, named beam.smp (process.title sets /proc/self/comm).
// net.core.rmem_max/wmem_max are the host's (read-only in a namespace on 6.x: never written here);
// the namespace's own tcp_rmem/tcp_wmem max are 128 MiB, so that a buffer pinned at twice the host's
// rmem_max (8 MiB here) is far below what autotuning allows, as 448 KiB is on the seed's hosts. It
// opens osiris's two sockets as osiris makes them, asking more than the ceiling (replica_recbuf and
// replica_sndbuf at least 2041500 and 1469880): a replica listener on port 6000 with SO_RCVBUF set
// before listen and closed once it accepted, reading in short bursts (a follower that keeps up less
// well than loopback: its leader is then rwnd-limited), and a replica reader with SO_SNDBUF set before
// connect, writing; and an AMQP listener on 5672 with tcp_listen_options.recbuf = 16384 (below the
// ceiling), kept open. Two sock_diag samples a second apart, judged with each side alone (as each
// host of a cluster sees it), with both, and with a /proc tree that hides rmem_max and wmem_max; the
// doctor's sockets section; the exporter's series of the follower before and after the leader
// reconnects from a new ephemeral port.
// Prints one JSON line.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatSocketFindings, socketFindings } from '../../src/doctor/sockets.js';
import { analyze, type HostLimits, type InspectedSocket } from '../../src/observe/analyze.js';
import { startExporter } from '../../src/observe/exporter-server.js';
import { readHostLimits, takeSnapshot } from '../../src/observe/inspect.js';
import type { DiagSocket } from '../../src/observe/sockdiag.js';
import { SO_RCVBUF, SO_SNDBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import {
  bindFd,
  connectFd,
  createSocket,
  listenFd,
  listenOnFd,
  setIntOption,
  socketFromFd,
} from '../../src/sys/socket.js';

process.title = 'beam.smp';

/** A listener on `port` (SO_RCVBUF `rcvbuf` before listen), a client (SO_SNDBUF `sndbuf`) writing for `seconds`. */
async function pair(port: number, o: { rcvbuf: number; sndbuf?: number; closeListener: boolean }) {
  const accepted: net.Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const server = net.createServer((c) => {
    accepted.push(c);
    c.on('error', () => {});
    c.on('data', () => {});
    if (o.closeListener) {
      server.close(); // as osiris does once the leader connected
      // reads 3 ms in every 10: the window fills between bursts
      c.pause();
      timers.push(
        setInterval(() => {
          c.resume();
          setTimeout(() => c.pause(), 3);
        }, 10),
      );
    }
  });
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, o.rcvbuf);
  bindFd(lfd, { host: '127.0.0.1', port });
  listenFd(lfd);
  await listenOnFd(server, lfd);
  const cfd = createSocket('127.0.0.1', SOCK_STREAM);
  if (o.sndbuf) setIntOption(cfd, SOL_SOCKET, SO_SNDBUF, o.sndbuf);
  await connectFd(cfd, { host: '127.0.0.1', port }, 5);
  const client = socketFromFd(cfd);
  client.on('error', () => {});
  const msg = Buffer.alloc(256 * 1024, 7);
  const until = performance.now() + 12_000;
  const pump = () => {
    while (performance.now() < until && !client.destroyed) if (!client.write(msg)) return;
  };
  client.on('drain', pump);
  pump();
  return () => {
    for (const t of timers) clearInterval(t);
    client.destroy();
    for (const c of accepted) c.destroy();
    server.close();
  };
}

const core = (n: string) => Number(readFileSync(`/proc/sys/net/core/${n}`, 'utf8'));
const osiris = () =>
  pair(6000, {
    rcvbuf: Math.max(2041500, core('rmem_max') + 1),
    sndbuf: Math.max(1469880, core('wmem_max') + 1),
    closeListener: true,
  });
const stops = [await osiris(), await pair(5672, { rcvbuf: 16384, closeListener: false })];
// a /proc tree that hides rmem_max and wmem_max (as a namespace or container may): tcp_rmem etc. only
const fake = mkdtempSync(join(tmpdir(), 'sockbuf-pin-advice-'));
mkdirSync(join(fake, 'sys/net/ipv4'), { recursive: true });
for (const n of ['tcp_rmem', 'tcp_wmem', 'ip_local_port_range'])
  writeFileSync(join(fake, 'sys/net/ipv4', n), readFileSync(`/proc/sys/net/ipv4/${n}`));
const hidden = readHostLimits(fake);
rmSync(fake, { recursive: true, force: true });
const host = readHostLimits();

await sleep(300);
const established = (s: DiagSocket) => s.stateName === 'established' || s.stateName === 'listen';
const take = () => {
  const snap = takeSnapshot({ protocols: ['tcp'], families: [4] });
  return { ...snap, sockets: snap.sockets.filter(established) };
};
const first = take();
await sleep(1000);
const second = take();
// the doctor's sockets section (two samples 0.5 s apart, the namespace's sysctls)
const doctor = formatSocketFindings(await socketFindings()).filter((l) => l.includes(':6000 →'));

/** The rows of one side: `keep` says which sockets this host sees (the other end is on another host). */
function side(keep: (s: DiagSocket) => boolean, limits: HostLimits): InspectedSocket[] {
  const only = (x: typeof first) => ({ ...x, sockets: x.sockets.filter(keep) });
  return analyze(only(second), limits, only(first)).filter((r) => r.state === 'established');
}
const follower = (s: DiagSocket) => s.localPort === 6000;
const leader = (s: DiagSocket) => s.remotePort === 6000;
const amqp = (s: DiagSocket) => s.localPort === 5672;
// the exporter's series of the follower's socket, over two scrapes a second apart; then the leader
// reconnects (a new ephemeral port, the follower's listener on 6000 again) and the series stay
const exporter = await startExporter({ port: 0, hostCounters: false, top: 1000 });
const scrape = async () => {
  await fetch(exporter.url).then((r) => r.text());
  await sleep(1000);
  const text = await fetch(exporter.url).then((r) => r.text());
  return text
    .split('\n')
    .filter((l) => /^sockbuf_socket_(flagged|pin_info|receive_buffer_bytes)\{.*port="600[0-9]"/.test(l));
};
const before = await scrape();
const leaderPort = second.sockets.find(leader)?.localPort;
stops.shift()?.();
stops.push(await osiris());
await sleep(300);
const after = await scrape();
const newLeaderPort = take().sockets.find(leader)?.localPort;
await exporter.close();
for (const stop of stops) stop();

console.log(
  JSON.stringify({
    series: { before, after, leaderPort, newLeaderPort },
    doctor,
    host,
    hidden,
    follower: side(follower, host),
    leader: side(leader, host),
    both: side((s) => follower(s) || leader(s), host),
    amqp: side((s) => amqp(s) || (s.stateName === 'listen' && s.localPort === 5672), host),
    followerHidden: side(follower, hidden),
    leaderHidden: side(leader, hidden),
  }),
);
