// The lab: two network namespaces (a client host and a server host) joined by the user-space delay
// line, so a transfer on one machine sees a real round-trip time and rate cap. Names carry sockbuf's
// prefix and the owning PID (sbl-<pid>-c, sbl-<pid>-s); what a dead PID left behind is removed by
// the next lab command (cleanStale), what a live one owns is never touched.
import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBoundedJson, readBoundedJsonFile } from '../policy/json.js';
import { EnvironmentError, formatBitRate, formatDuration, UsageError } from '../policy/units.js';
import { sockbufCommand } from '../sys/process.js';
import { readSysctlText } from '../sys/sysctl.js';
import { closeTun, openTun, type TunDevice } from '../sys/tun.js';
import { type DelayLine, type DirectionStats, startDelayLine } from './delayline.js';
import { HOST_CONGESTION } from './spec.js';
import { restoreStaleSysctls } from './sysctls.js';

export const LAB_PREFIX = 'sbl-';
export const LAB_ENV = 'SOCKBUF_LAB';
const STATE_DIR = '/run/sockbuf';
/** A lab's state file, its description in SOCKBUF_LAB and a probe's output are small: 1 MiB at most. */
const MAX_STATE_BYTES = 1 << 20;
const NETNS_DIR = '/run/netns';

export type HostName = 'client' | 'server';

export interface LabOptions {
  rttMs: number;
  /** Rate cap in bit/s each way; 0 or undefined = none. */
  bitsPerSecond?: number;
  /** Loss probability per segment each way, 0…1. */
  loss?: number;
  mtu?: number;
  /** Delay-line threads: 2 = one per direction (default), 1 = one for both. */
  threads?: 1 | 2;
  /**
   * TCP congestion control of both hosts, set on their routes to each other (`ip route … congctl`, so
   * every TCP connection across the lab uses it, whatever program made it): default 'cubic';
   * 'host' keeps the kernel's default.
   */
  congestion?: string;
  /** Made by `sockbuf lab up` (a hold process): only such labs are what lab down / lab exec / the lab placement pick. */
  held?: boolean;
}

export interface LabHost {
  netns: string;
  dev: string;
  ipv4: string;
  ipv6: string;
}

/** What describes a lab to other processes (the SOCKBUF_LAB variable and the state file). */
export interface LabInfo {
  id: string;
  pid: number;
  rttMs: number;
  bitsPerSecond: number;
  loss: number;
  mtu: number;
  mode: string;
  hosts: Record<HostName, LabHost>;
  /** The TCP congestion control across the lab (absent in labs made before it was recorded). */
  congestion?: string;
  /** 'lab': set on the lab's routes; 'host': the kernel's default, left alone. */
  congestionFrom?: 'lab' | 'host';
  held?: boolean;
}

export interface LabMeasurement {
  /** Round trips across the lab as the kernel measured them (TCP handshakes, tcp_info), median and minimum. */
  rttUs: number;
  minRttUs: number;
  /** Ping-pong between two processes (1-byte TCP messages), median: adds the processes' wake-ups. */
  appRttUs: number;
  /** What a short autotuned TCP transfer carried, as the receiver saw it: on average (slow start
   * included), and at best over 100 ms (once the window has opened). */
  bitsPerSecond: number;
  peakBitsPerSecond: number;
  seconds: number;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

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

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** PIDs of the processes inside a namespace (empty when it is gone). */
function netnsPids(netns: string): number[] {
  try {
    return execFileSync('ip', ['netns', 'pids', netns], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Kills what still runs inside a lab namespace (all of it was started through the lab), then removes it. */
function removeNetns(netns: string): void {
  for (const pid of netnsPids(netns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  tryIp('netns', 'del', netns);
}

function stateFile(pid: number): string {
  return join(STATE_DIR, `lab-${pid}.json`);
}

/** The argv that runs a module of this package with node, also under tsx (tests). */
export function nodeArgv(moduleUrl: URL): string[] {
  const path = fileURLToPath(moduleUrl);
  if (path.endsWith('.ts')) return [process.execPath, '--import', import.meta.resolve('tsx'), path];
  return [process.execPath, path];
}

function moduleUrl(name: string): URL {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`${name}${ext}`, import.meta.url);
}

export interface LabListing {
  id: string;
  pid: number;
  alive: boolean;
  netns: string[];
  info?: LabInfo;
}

/** Every lab on this host: namespaces named sbl-<pid>-* and state files, grouped by PID. */
export function listLabs(): LabListing[] {
  const byPid = new Map<number, LabListing>();
  const get = (pid: number) => {
    let l = byPid.get(pid);
    if (!l) {
      l = { id: String(pid), pid, alive: alive(pid), netns: [] };
      byPid.set(pid, l);
    }
    return l;
  };
  const names = existsSync(NETNS_DIR) ? readdirSync(NETNS_DIR) : [];
  for (const n of names) {
    const m = /^sbl-(\d+)-[cs]$/.exec(n);
    if (m) get(Number(m[1])).netns.push(n);
  }
  const files = existsSync(STATE_DIR) ? readdirSync(STATE_DIR) : [];
  for (const f of files) {
    const m = /^lab-(\d+)\.json$/.exec(f);
    if (!m) continue;
    const l = get(Number(m[1]));
    try {
      l.info = readBoundedJsonFile(join(STATE_DIR, f), { maxBytes: MAX_STATE_BYTES }) as LabInfo;
    } catch {
      // half-written by a killed process: still stale
    }
  }
  return [...byPid.values()].sort((a, b) => a.pid - b.pid);
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

// Labs of this process, for the clean-up on signals and exit.
const active = new Set<Lab>();
let handlersInstalled = false;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      for (const lab of active) lab.closeSync();
      process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
    });
  }
  process.on('exit', () => {
    for (const lab of active) lab.closeSync();
  });
}

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
    installHandlers();
    const pid = process.pid;
    const mtu = opts.mtu ?? 1500;
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
      if (err instanceof Error && 'stderr' in err) {
        const msg = String((err as { stderr: unknown }).stderr).trim();
        if (msg) throw new EnvironmentError(`lab set-up failed: ${msg}`);
      }
      throw err;
    }
  }

  /** The environment that tells child processes (the bench runner) where the lab is. */
  env(): NodeJS.ProcessEnv {
    return { ...process.env, [LAB_ENV]: JSON.stringify(this.info) };
  }

  /** Starts `argv` inside a host's namespace. */
  spawn(host: HostName, argv: string[], opts: SpawnOptions = {}): ChildProcess {
    return spawnIn(this.info, host, argv, { env: this.env(), ...opts });
  }

  /** Runs `argv` inside a host's namespace to its end, with stdout and stderr collected. */
  exec(host: HostName, argv: string[], opts: { timeoutMs?: number } = {}): Promise<ExecResult> {
    return collect(this.spawn(host, argv, { stdio: ['ignore', 'pipe', 'pipe'] }), opts.timeoutMs ?? 60_000);
  }

  stats(): { forward: DirectionStats; reverse: DirectionStats } {
    return this.line.stats();
  }

  /** The lab measures itself: ping-pong round trips, then a short autotuned TCP transfer. */
  async measure(opts: { pings?: number; seconds?: number } = {}): Promise<LabMeasurement> {
    const probe = nodeArgv(moduleUrl('./probe'));
    const port = '5299';
    const server = this.spawn('server', [...probe, 'serve', this.info.hosts.server.ipv4, port], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout?.once('data', () => resolve());
        server.once('exit', (code) => reject(new Error(`lab probe server exited (${code})`)));
      });
      const to = this.info.hosts.server.ipv4;
      const p = await this.exec('client', [...probe, 'ping', to, port, String(opts.pings ?? 20)]);
      if (p.code !== 0) throw new Error(`lab ping probe failed: ${p.stderr.trim()}`);
      const got0 = parseBoundedJson(p.stdout, { maxLength: MAX_STATE_BYTES }) as {
        rttUs: number[];
        kernelRttUs: number[];
      };
      const sorted = (xs: number[]) => xs.filter((x) => x > 0).sort((a, b) => a - b);
      const samples = sorted(got0.kernelRttUs);
      const app = sorted(got0.rttUs.slice(1));
      const b = await this.exec('client', [...probe, 'push', to, port, String(opts.seconds ?? 1)]);
      if (b.code !== 0) throw new Error(`lab transfer probe failed: ${b.stderr.trim()}`);
      const got = parseBoundedJson(b.stdout, { maxLength: MAX_STATE_BYTES }) as {
        bytes: number;
        seconds: number;
        peakBitsPerSecond: number;
      };
      return {
        rttUs: samples[samples.length >> 1],
        minRttUs: samples[0],
        appRttUs: app[app.length >> 1],
        bitsPerSecond: Math.round((got.bytes * 8) / got.seconds),
        peakBitsPerSecond: Math.round(got.peakBitsPerSecond),
        seconds: got.seconds,
      };
    } finally {
      server.kill('SIGTERM');
    }
  }

  /** Takes the lab down: stops the delay line, closes the tun devices, removes the namespaces. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    active.delete(this);
    await this.line.stop();
    for (const t of this.tuns) closeTun(t);
    removeNetns(this.info.hosts.client.netns);
    removeNetns(this.info.hosts.server.netns);
    rmSync(stateFile(this.info.pid), { force: true });
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
 * Starts `argv` in a host's namespace of a lab described by `info` (also one owned by another process).
 * `sockbuf` as the command runs this sockbuf (ownSockbuf).
 */
export function spawnIn(
  info: LabInfo,
  host: HostName,
  argv: string[],
  opts: SpawnOptions = {},
): ChildProcess {
  const [cmd, ...rest] = ownSockbuf(argv);
  const [file, ...args] = netnsArgv(info, host, cmd, rest);
  return spawn(file, args, {
    env: { ...process.env, [LAB_ENV]: JSON.stringify(info) },
    ...opts,
  });
}

/** The lab this process runs under (SOCKBUF_LAB), if any. */
export function labFromEnv(env: NodeJS.ProcessEnv = process.env): LabInfo | undefined {
  const v = env[LAB_ENV];
  if (!v) return undefined;
  let info: unknown;
  try {
    info = parseBoundedJson(v, { maxLength: MAX_STATE_BYTES });
  } catch (err) {
    throw new UsageError(`${LAB_ENV} is not a lab's description: ${(err as Error).message}`);
  }
  const hosts = (info as Partial<LabInfo> | null)?.hosts;
  if (
    typeof hosts !== 'object' ||
    hosts === null ||
    typeof hosts.client !== 'object' ||
    typeof hosts.server !== 'object'
  )
    throw new UsageError(`${LAB_ENV} is not a lab's description (no client and server hosts)`);
  return info as LabInfo;
}

function collect(child: ChildProcess, timeoutMs: number): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => {
      stdout += d;
    });
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/** Labs made by `sockbuf lab up` whose holder is alive (not the labs other processes made for themselves). */
export function heldLabs(): LabListing[] {
  return listLabs().filter((l) => l.alive && l.info?.held);
}

/** The lab to run in: the one this process runs under (SOCKBUF_LAB), else the one `lab up` made. */
export function currentLab(env: NodeJS.ProcessEnv = process.env): LabInfo | undefined {
  const fromEnv = labFromEnv(env);
  if (fromEnv) return fromEnv;
  const live = heldLabs();
  if (live.length > 1) {
    throw new EnvironmentError(
      `several labs are up (${live.map((l) => l.id).join(', ')}): run under one with sockbuf lab exec, or take the others down`,
    );
  }
  return live[0]?.info;
}

/** argv that runs `file args` inside a host of the lab (for runners that spawn processes themselves). */
export function netnsArgv(info: LabInfo, host: HostName, file: string, args: string[]): string[] {
  return ['ip', 'netns', 'exec', info.hosts[host].netns, file, ...args];
}

/** One line for people about the lab and what it measured of itself. */
export function describeLab(info: LabInfo, m?: LabMeasurement): string {
  const cc = info.congestion
    ? `, tcp ${info.congestion}${info.congestionFrom === 'host' ? " (the host's default)" : ''}`
    : '';
  const asked = `rtt ${formatDuration(info.rttMs / 1000)}${info.bitsPerSecond ? `, bandwidth ${formatBitRate(info.bitsPerSecond)}` : ''}${info.loss ? `, loss ${info.loss * 100}%` : ''}${cc}`;
  const got = m
    ? `; measured rtt ${formatDuration(m.rttUs / 1e6)} (kernel, median of handshakes; min ${formatDuration(m.minRttUs / 1e6)}; process ping-pong ${formatDuration(m.appRttUs / 1e6)}), carried ${formatBitRate(m.peakBitsPerSecond)} at best over 100 ms, ${formatBitRate(m.bitsPerSecond)} on average (1 TCP stream, autotuned, 1 s)`
    : '';
  return `lab ${info.id}: ${asked}${got}; delay line: ${info.mode}; client ${info.hosts.client.ipv4}, server ${info.hosts.server.ipv4}`;
}
