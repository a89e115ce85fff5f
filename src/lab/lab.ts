// The lab's life cycle: two network namespaces (a client host and a server host) joined by the
// user-space delay line, so a transfer on one machine sees a real round-trip time and rate cap. Up
// (create), down (close, or closeSync at exit) and the clean-up of what labs of dead processes left
// behind (cleanStale). Signals are the caller's: a library does not own the process (the CLI's
// src/cli/signals.ts turns them into an abort, and the command closes its lab). Which labs exist: registry.ts; the `ip` plumbing: netns.ts;
// the self-check: measure.ts; labs that outlive a command (lab up, lab -- CMD): hold.ts.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Child, type ChildOptions, CommandError, type RunResult, run } from '../sys/process.js';
import { readSysctlText } from '../sys/sysctl.js';
import { closeTun, openTun, type TunDevice } from '../sys/tun.js';
import { type DelayLine, type DirectionStats, startDelayLine } from './delayline.js';
import { type LabMeasurement, measureLab } from './measure.js';
import { ip, netnsCommand, peerRoutes, removeNetns } from './netns.js';
import {
  type HostName,
  LAB_ENV,
  LAB_PREFIX,
  type LabHost,
  type LabInfo,
  listLabs,
  NETNS_DIR,
  STATE_DIR,
  stateFile,
} from './registry.js';
import { HOST_CONGESTION, type LabOptions } from './spec.js';

export type { LabOptions };

import { EnvironmentError } from '../errors.js';
import { OPTIONS } from '../policy/option-registry.js';
import { restoreStaleSysctls } from './sysctls.js';

export const ADDRESSES: Record<HostName, { ipv4: string; ipv6: string }> = {
  client: { ipv4: '10.201.0.1', ipv6: 'fd00:5b::1' },
  server: { ipv4: '10.201.0.2', ipv6: 'fd00:5b::2' },
};

export function assertRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new EnvironmentError('the lab needs root (network namespaces, tun devices): run as root');
  }
  if (!existsSync('/dev/net/tun')) throw new EnvironmentError('the lab needs /dev/net/tun (CONFIG_TUN)');
}

/**
 * Removes what labs of dead PIDs left behind (namespaces, processes in them, state files) and puts
 * back sysctls a killed sweep changed. Returns what it removed or restored.
 */
export function cleanStale(): string[] {
  const removed: string[] = restoreStaleSysctls().map((s) => `sysctls of ${s}`);
  for (const l of listLabs()) {
    if (l.alive && l.pid !== process.pid) continue;
    if (l.pid === process.pid && active.size) continue;
    for (const n of l.netns) removeNetns(n);
    rmSync(stateFile(l.pid), { force: true });
    removed.push(l.id);
  }
  return removed;
}

// Labs of this process, taken down when it exits without having closed them; and the undo of a lab
// still being created (its namespaces exist before the delay line starts: a process that exits in
// that window, e.g. on a signal, must not leave them to the next cleanStale).
const active = new Set<Lab>();
const creating = new Set<() => void>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const lab of active) lab.closeSync();
    for (const undo of creating) undo();
  });
}

/**
 * Two network namespaces joined by a link with a round-trip time, a rate and a loss, for one run.
 * The handle is the caller's to close (close(), or `await using`): a lab left open is taken down when
 * the process exits, and one of a process killed by a signal it did not handle is removed by the next
 * cleanStale(). Lab installs no signal handler.
 */
export class Lab {
  readonly info: LabInfo;
  private readonly tuns: TunDevice[];
  private readonly line: DelayLine;
  private closed = false;

  private constructor(info: LabInfo, tuns: TunDevice[], line: DelayLine) {
    this.info = info;
    this.tuns = tuns;
    this.line = line;
  }

  /** Brings a lab up. Cleans stale leftovers of dead PIDs first. Root only. */
  static async create(opts: LabOptions): Promise<Lab> {
    assertRoot();
    cleanStale();
    installExitHook();
    const pid = process.pid;
    const mtu = opts.mtu ?? OPTIONS.mtu.default;
    const congestion = opts.congestion ?? 'cubic';
    const hosts: Record<HostName, LabHost> = {
      client: { netns: `${LAB_PREFIX}${pid}-c`, dev: `${LAB_PREFIX}${pid}-c`, ...ADDRESSES.client },
      server: { netns: `${LAB_PREFIX}${pid}-s`, dev: `${LAB_PREFIX}${pid}-s`, ...ADDRESSES.server },
    };
    if (existsSync(join(NETNS_DIR, hosts.client.netns)) || existsSync(join(NETNS_DIR, hosts.server.netns))) {
      throw new EnvironmentError(`this process (${pid}) already has a lab`);
    }
    const tuns: TunDevice[] = [];
    const undo = () => {
      for (const t of tuns) closeTun(t);
      removeNetns(hosts.client.netns);
      removeNetns(hosts.server.netns);
    };
    creating.add(undo);
    try {
      for (const name of ['client', 'server'] as const) {
        const h = hosts[name];
        const peer = hosts[name === 'client' ? 'server' : 'client'];
        ip('netns', 'add', h.netns);
        // Opened here in the root namespace: the fd stays valid after the link moves.
        const tun = openTun(h.dev);
        tuns.push(tun);
        ip('link', 'set', 'dev', h.dev, 'netns', h.netns);
        ip('-n', h.netns, 'link', 'set', 'lo', 'up');
        ip('-n', h.netns, 'link', 'set', 'dev', h.dev, 'mtu', String(mtu), 'up');
        ip('-n', h.netns, 'addr', 'add', h.ipv4, 'peer', peer.ipv4, 'dev', h.dev);
        if (mtu >= 1280) ip('-n', h.netns, 'addr', 'add', h.ipv6, 'peer', peer.ipv6, 'dev', h.dev, 'nodad');
        if (congestion !== HOST_CONGESTION) {
          for (const argv of peerRoutes(h, peer, congestion, mtu >= 1280)) {
            try {
              ip(...argv);
            } catch (err) {
              const msg = String((err as { stderr?: unknown }).stderr ?? err).trim();
              const have = readSysctlText('net.ipv4.tcp_available_congestion_control') ?? '?';
              throw new EnvironmentError(
                `lab set-up failed: congestion control '${congestion}': ${msg} (loaded now: ${have})`,
              );
            }
          }
        }
      }
      const line = await startDelayLine(tuns[0], tuns[1], {
        rttMs: opts.rttMs,
        bitsPerSecond: opts.bitsPerSecond ?? 0,
        loss: opts.loss ?? 0,
        threads: opts.threads,
      });
      const info: LabInfo = {
        id: String(pid),
        pid,
        rttMs: opts.rttMs,
        bitsPerSecond: opts.bitsPerSecond ?? 0,
        loss: opts.loss ?? 0,
        mtu,
        mode: `${line.mode}, MTU ${mtu}`,
        hosts,
        // a new namespace starts with the host's default (net.ipv4.tcp_congestion_control of init_net)
        congestion:
          congestion === HOST_CONGESTION
            ? (readSysctlText('net.ipv4.tcp_congestion_control') ?? 'unknown')
            : congestion,
        congestionFrom: congestion === HOST_CONGESTION ? 'host' : 'lab',
      };
      if (opts.held) info.held = true;
      const lab = new Lab(info, tuns, line);
      active.add(lab);
      mkdirSync(STATE_DIR, { recursive: true });
      writeFileSync(stateFile(pid), `${JSON.stringify(info)}\n`);
      return lab;
    } catch (err) {
      undo();
      if (err instanceof CommandError && err.stderr)
        throw new EnvironmentError(`lab set-up failed: ${err.stderr}`);
      throw err;
    } finally {
      creating.delete(undo);
    }
  }

  /** The environment that tells child processes (the bench runner) where the lab is. */
  env(): NodeJS.ProcessEnv {
    return { ...process.env, [LAB_ENV]: JSON.stringify(this.info) };
  }

  /** Starts `argv` inside a host's namespace (src/sys/process.ts: stdout lines, stderr tail, stop()). */
  spawn(host: HostName, argv: string[], opts: ChildOptions & { env?: Record<string, string> } = {}): Child {
    const spec = netnsCommand(this.info, host, argv);
    return new Child({ ...spec, env: { ...spec.env, ...opts.env } }, opts);
  }

  /** Runs `argv` inside a host's namespace to its end, with stdout and stderr collected. */
  exec(host: HostName, argv: string[], opts: { timeoutMs?: number } = {}): Promise<RunResult> {
    return run(netnsCommand(this.info, host, argv), opts.timeoutMs);
  }

  /** The delay line's counts in each direction: packets and bytes in and out, lost, dropped at the queue limit, write errors. */
  stats(): { forward: DirectionStats; reverse: DirectionStats } {
    return this.line.stats();
  }

  /** The lab measures itself: ping-pong round trips, then a short autotuned TCP transfer. */
  measure(opts: { pings?: number; seconds?: number } = {}): Promise<LabMeasurement> {
    return measureLab(this.info, opts);
  }

  /**
   * Takes the lab down: stops the delay line, closes the tun devices, removes the namespaces. Rejects,
   * once all of it is down, when a delay-line thread had failed (a SysError with its errno).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    active.delete(this);
    try {
      await this.line.stop();
    } finally {
      for (const t of this.tuns) closeTun(t);
      removeNetns(this.info.hosts.client.netns);
      removeNetns(this.info.hosts.server.netns);
      rmSync(stateFile(this.info.pid), { force: true });
    }
  }

  /** The same as close(), for `await using lab = await Lab.create(…)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** The same from a signal handler or at exit, without waiting (the kernel closes the fds at exit). */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    active.delete(this);
    removeNetns(this.info.hosts.client.netns);
    removeNetns(this.info.hosts.server.netns);
    rmSync(stateFile(this.info.pid), { force: true });
  }
}

/** Brings a lab up, runs `fn`, and takes the lab down whatever happens. */
export async function withLab<T>(opts: LabOptions, fn: (lab: Lab) => Promise<T>): Promise<T> {
  const lab = await Lab.create(opts);
  try {
    return await fn(lab);
  } finally {
    await lab.close();
  }
}
