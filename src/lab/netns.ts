// The lab's plumbing with `ip`: the routes that carry a congestion control, running a command inside
// a lab host's namespace, and removing a namespace with whatever still runs in it.
import { CommandError, runSync, type SpawnSpec, sockbufCommand } from '../sys/process.js';
import { type HostName, LAB_ENV, type LabHost, type LabInfo } from './registry.js';

/** `ip ARGS`; throws CommandError with ip's stderr. */
export function ip(...args: string[]): string {
  return runSync('ip', args);
}

function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

/**
 * `ip` argv that give a lab host its route to the peer with a congestion control: the same routes the
 * peer addresses made (proto kernel), replaced with `congctl NAME`. Per namespace, so nothing changes
 * on the host (net.ipv4.tcp_congestion_control of a namespace refuses algorithms outside the
 * host-wide tcp_allowed_congestion_control; a route metric does not). Pure.
 */
export function peerRoutes(h: LabHost, peer: LabHost, congestion: string, ipv6: boolean): string[][] {
  const v4 = ['-n', h.netns, 'route', 'replace', peer.ipv4, 'dev', h.dev, 'proto', 'kernel', 'scope', 'link'];
  const routes = [[...v4, 'src', h.ipv4, 'congctl', congestion]];
  if (ipv6) {
    routes.push([
      '-n',
      h.netns,
      '-6',
      'route',
      'replace',
      peer.ipv6,
      'dev',
      h.dev,
      'proto',
      'kernel',
      'metric',
      '256',
      'congctl',
      congestion,
    ]);
  }
  return routes;
}

/** PIDs of the processes inside a namespace (empty when it is gone). */
function netnsPids(netns: string): number[] {
  try {
    return ip('netns', 'pids', netns).split(/\s+/).filter(Boolean).map(Number);
  } catch (err) {
    if (err instanceof CommandError) return [];
    throw err;
  }
}

/** Kills what still runs inside a lab namespace (all of it was started through the lab), then removes it. */
export function removeNetns(netns: string): void {
  for (const pid of netnsPids(netns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  tryIp('netns', 'del', netns);
}

/** argv that runs `file args` inside a host of the lab (for runners that spawn processes themselves). */
export function netnsArgv(info: LabInfo, host: HostName, file: string, args: string[]): string[] {
  return ['ip', 'netns', 'exec', info.hosts[host].netns, file, ...args];
}

/**
 * `sockbuf …` is this sockbuf (node and its entry: dist/cli/main.js, or the sources under tsx), whether
 * or not a sockbuf is on PATH; any other argv is left as it is.
 */
export function ownSockbuf(argv: string[]): string[] {
  if (argv[0] !== 'sockbuf') return argv;
  const c = sockbufCommand(argv.slice(1));
  return [c.file, ...c.args];
}

/**
 * `argv` as a process inside a host of the lab, with the lab in its environment (SOCKBUF_LAB);
 * `sockbuf` as the command runs this sockbuf (ownSockbuf).
 */
export function netnsCommand(info: LabInfo, host: HostName, argv: string[]): SpawnSpec {
  const [cmd, ...rest] = ownSockbuf(argv);
  const [file, ...args] = netnsArgv(info, host, cmd, rest);
  return { file, args, env: { [LAB_ENV]: JSON.stringify(info) } };
}
