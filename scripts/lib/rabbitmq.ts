// A real RabbitMQ broker (Debian's rabbitmq-server, 3.10.8 here) and amqplib clients for the scripts
// and tests that need one, each broker with its own files, node name and ports, never /etc/rabbitmq or
// the system service. Issue 34 (seed 000 on its own system).
//
//   const broker = await startBroker({ recbuf: 16384, sndbuf: 16384 }); // ready, or it throws
//   try {
//     const pub = startClient('publish', { url: broker.url, queue: 'q', kib: 256, count: 400, seconds: 10 });
//     const { localPort } = await pub.ready;       // the publisher's side of its connection
//     const r = await pub.done;                    // { messages, bytes, seconds, MBps, MiBps }
//   } finally {
//     await broker.stop();                         // broker and epmd, by pid; idempotent
//   }
//
// startBroker(options): Promise<Broker>
//   address   the AMQP listener's address (default 127.0.0.1; a lab host's address in its namespace)
//   port, distPort, epmdPort   AMQP, Erlang distribution and epmd ports (default: free loopback ports;
//             epmd and the distribution listen on 127.0.0.1 only, epmd through ERL_EPMD_PORT)
//   recbuf, sndbuf   tcp_listen_options.recbuf/.sndbuf: the pin under study (default: not set, autotuned)
//   nodelay   tcp_listen_options.nodelay (default true). RabbitMQ's trap: setting any
//             tcp_listen_options key replaces its whole default list ([{backlog,128},{nodelay,true},
//             {linger,{true,0}},{exit_on_close,false}]), so nodelay goes off unless written again;
//             when a buffer is pinned this writes the whole default list back with the pin.
//   wrap      argv prefix that runs the broker, epmd and clients elsewhere and EXECS them (the pid stays
//             the program's): ['ip', 'netns', 'exec', NETNS] (labNetns(info, host) for a sockbuf lab).
//             The broker's pid is checked to be beam.smp once it is ready.
//   readyMs   how long to wait for "Server startup complete" (default 60 s; it takes 5–10 s here)
//   nodename, longnames, home, distAddress, advanced   for a cluster node (rabbitmq-cluster.ts): its
//             full name (rabbit@10.201.0.2 with longnames: RABBITMQ_USE_LONGNAME=true), a HOME shared
//             by the nodes (one Erlang cookie), epmd and the distribution on that address instead of
//             127.0.0.1, advanced.config's text
// Broker: { pid (beam.smp), epmdPid, address, port, url (amqp://guest:guest@…), nodename, dir,
//   config (rabbitmq.conf's text), log() (the last 64 KiB of its output), exited, ctl(args) (rabbitmqctl
//   -n nodename beside it: its namespace, cookie and epmd; bounded, killed with the rest), stop() }.
// The files (config, mnesia, logs, the Erlang cookie in HOME) live in a temp dir removed by stop().
// stop() ends the broker (SIGTERM: RabbitMQ stops cleanly in ~1–2 s; SIGKILL after 10 s), then its
// epmd (started here, in the foreground, not epmd -daemon), then removes the dir. At process exit
// and on SIGINT/SIGTERM/SIGHUP (when no one else handles them) every broker, epmd and client still
// running is killed; and startBroker first kills what runs of dead processes left behind (found by
// SOCKBUF_RABBITMQ_OWNER=<dead pid> in their environment).
//
// startClient('publish' | 'consume', { url, queue, kib = 256, count, seconds, wrap, type, unconfirmed }):
//   AmqpClient —
//   scripts/lib/amqp-client.child.ts in its own process (publisher with confirms, consumer with prefetch 64,
//   seed 000's pair), bounded by count and seconds (SIGKILL 20 s past the bound); type 'stream': a
//   durable stream queue of 2 replicas (seed 000's osiris); unconfirmed: at most that many (256).
//   AmqpClient: { pid, ready (its pid and local port), done (ClientResult), stop() (SIGTERM: it reports
//   what it counted so far) }.
//
// rabbitmqMissing(): why no broker can start here (undefined when it can): for tests to skip.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const RABBITMQ_CTL = '/usr/lib/rabbitmq/bin/rabbitmqctl';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT = fileURLToPath(new URL('./amqp-client.child.ts', import.meta.url));
const OWNER_ENV = 'SOCKBUF_RABBITMQ_OWNER';
const DIR_PREFIX = 'sockbuf-rabbitmq-';

export interface BrokerOptions {
  address?: string;
  port?: number;
  distPort?: number;
  epmdPort?: number;
  recbuf?: number;
  sndbuf?: number;
  nodelay?: boolean;
  wrap?: string[];
  readyMs?: number;
  /** Full node name (default sockbuf<pid>n<k>@localhost); one with a dotted host needs `longnames`. */
  nodename?: string;
  /** RABBITMQ_USE_LONGNAME=true: node names like rabbit@10.201.0.2 (a lab host's address). */
  longnames?: boolean;
  /** HOME (where the Erlang cookie is): one shared by the nodes of a cluster (default: the broker's dir). */
  home?: string;
  /** Where epmd and the distribution listen (default 127.0.0.1; epmd adds loopback itself). */
  distAddress?: string;
  /** advanced.config's text (Erlang terms), e.g. `[{osiris, [{port_range, {6000, 6500}}]}].` */
  advanced?: string;
}

export interface Broker {
  /** beam.smp's pid. */
  pid: number;
  epmdPid: number;
  address: string;
  port: number;
  url: string;
  nodename: string;
  dir: string;
  config: string;
  log(): string;
  exited: Promise<number | null>;
  /** `rabbitmqctl -n NODENAME ARGS…` beside the broker (its namespace, cookie, epmd), bounded. */
  ctl(args: string[], timeoutMs?: number): Promise<{ code: number | null; out: string }>;
  stop(): Promise<void>;
}

export interface ClientResult {
  role: 'publish' | 'consume';
  messages: number;
  bytes: number;
  seconds: number;
  MBps: number;
  MiBps: number;
  /** MB counted in each whole second after the client was ready. */
  perSecondMBps: number[];
}

export interface AmqpClient {
  pid: number;
  ready: Promise<{ pid: number; localPort: number }>;
  done: Promise<ClientResult>;
  stop(): Promise<ClientResult | undefined>;
}

/** Why no broker can start on this machine, or undefined. */
export function rabbitmqMissing(): string | undefined {
  if (!existsSync(RABBITMQ_SERVER)) return `${RABBITMQ_SERVER} is missing (Debian package rabbitmq-server)`;
  if (!existsSync('/usr/bin/epmd')) return '/usr/bin/epmd is missing (Debian package erlang-base)';
  return undefined;
}

/** The argv prefix that runs a program inside a sockbuf lab host's namespace. */
export function labNetns(
  info: { hosts: Record<'client' | 'server', { netns: string }> },
  host: 'client' | 'server',
) {
  return ['ip', 'netns', 'exec', info.hosts[host].netns];
}

/** What a process-exit clean-up must kill (pids) and remove (dirs). */
const live = new Set<{ pids: () => number[]; dir?: string }>();
let handlersInstalled = false;

function killSync(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

function cleanupSync(): void {
  for (const l of live) {
    for (const pid of l.pids()) killSync(pid, 'SIGKILL');
    if (l.dir) rmSync(l.dir, { recursive: true, force: true });
  }
  live.clear();
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', cleanupSync);
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const sig of Object.keys(codes) as (keyof typeof codes)[]) {
    // someone else's handler decides how this process ends (and 'exit' runs the clean-up)
    if (process.listenerCount(sig) > 0) continue;
    process.once(sig, () => {
      cleanupSync();
      process.exit(codes[sig]);
    });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A directory of this run (a cluster's shared HOME, built modules) removed with the brokers at exit or
 * on a signal; the returned function forgets it (the caller removed it itself).
 */
export function removeAtExit(dir: string): () => void {
  installHandlers();
  const entry = { pids: () => [], dir };
  live.add(entry);
  return () => live.delete(entry);
}

/** Kills brokers, epmds and clients that earlier runs of dead processes left, and their temp dirs. */
export function cleanStaleBrokers(): string[] {
  const done: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    const m = env.match(new RegExp(`(?:^|\\0)${OWNER_ENV}=(\\d+)\\0`));
    if (!m || alive(Number(m[1]))) continue;
    killSync(Number(name), 'SIGKILL');
    done.push(`pid ${name} of dead ${m[1]}`);
  }
  for (const name of readdirSync(tmpdir())) {
    const m = name.match(new RegExp(`^${DIR_PREFIX}(\\d+)-`));
    if (!m || alive(Number(m[1]))) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
    done.push(join(tmpdir(), name));
  }
  return done;
}

/** Ends a child: `sig`, SIGKILL after `ms`; resolves when it has exited (or 3 s after SIGKILL). */
async function end(child: ChildProcess, exited: Promise<unknown>, sig: NodeJS.Signals, ms: number) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(sig);
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<void>((r) => {
    t = setTimeout(r, ms);
  });
  await Promise.race([exited, late]);
  clearTimeout(t);
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
}

/** rabbitmq.conf for these options (tcp_listen_options written whole whenever a buffer is pinned). */
export function brokerConfig(o: {
  address: string;
  port: number;
  recbuf?: number;
  sndbuf?: number;
  nodelay?: boolean;
}) {
  const lines = [
    `listeners.tcp.default = ${o.address}:${o.port}`,
    // guest may connect from a lab client's address (the default allows loopback only)
    'loopback_users = none',
  ];
  const pinned = o.recbuf !== undefined || o.sndbuf !== undefined;
  if (pinned || o.nodelay === false) {
    lines.push(
      'tcp_listen_options.backlog = 128',
      `tcp_listen_options.nodelay = ${o.nodelay ?? true}`,
      'tcp_listen_options.linger.on = true',
      'tcp_listen_options.linger.timeout = 0',
      'tcp_listen_options.exit_on_close = false',
    );
    if (o.recbuf !== undefined) lines.push(`tcp_listen_options.recbuf = ${o.recbuf}`);
    if (o.sndbuf !== undefined) lines.push(`tcp_listen_options.sndbuf = ${o.sndbuf}`);
  }
  return `${lines.join('\n')}\n`;
}

let started = 0;

export async function startBroker(opts: BrokerOptions = {}): Promise<Broker> {
  for (const [k, v] of Object.entries({ recbuf: opts.recbuf, sndbuf: opts.sndbuf }))
    if (v !== undefined && !(Number.isInteger(v) && v > 0))
      throw new Error(`${k}: not a positive integer: ${v}`);
  cleanStaleBrokers();
  installHandlers();
  const wrap = opts.wrap ?? [];
  const address = opts.address ?? '127.0.0.1';
  const port = opts.port ?? (await freePort());
  const distPort = opts.distPort ?? (await freePort());
  const epmdPort = opts.epmdPort ?? (await freePort());
  const nodename = opts.nodename ?? `sockbuf${process.pid}n${++started}@localhost`;
  const distAddress = opts.distAddress ?? '127.0.0.1';
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  const config = brokerConfig({ ...opts, address, port });
  writeFileSync(join(dir, 'rabbitmq.conf'), config);
  if (opts.advanced !== undefined) writeFileSync(join(dir, 'advanced.config'), opts.advanced);
  writeFileSync(join(dir, 'rabbitmq-env.conf'), ''); // else /etc/rabbitmq/rabbitmq-env.conf is read
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  mkdirSync(join(dir, 'log'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: opts.home ?? dir, // the Erlang cookie
    LANG: 'C.UTF-8',
    [OWNER_ENV]: String(process.pid),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
    RABBITMQ_FEATURE_FLAGS_FILE: join(dir, 'feature_flags'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_LOGS: '-', // to stdout, where readiness is read
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
    RABBITMQ_NODENAME: nodename,
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: distAddress,
    // our own epmd runs already; the distribution listens on distAddress only
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: `-start_epmd false -kernel inet_dist_use_interface {${distAddress.split('.').join(',')}}`,
    ...(opts.longnames ? { RABBITMQ_USE_LONGNAME: 'true' } : {}),
    // the script then execs erl (no shell left waiting in between): our child's pid is beam.smp's
    RUNNING_UNDER_SYSTEMD: 'true',
  };

  let log = '';
  const keep = (d: Buffer) => {
    log = (log + d).slice(-65536);
  };
  /** Starts `argv` beside the broker; its output goes to the broker's log, or (own) kept apart. */
  const launch = (argv: string[], toLog = true) => {
    const [file, ...args] = [...wrap, ...argv];
    const child = spawn(file, args, { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let own = '';
    const sink = toLog
      ? keep
      : (d: Buffer) => {
          own = (own + d).slice(-16384);
        };
    child.stdout?.on('data', sink);
    child.stderr?.on('data', sink);
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    child.on('error', (e) => sink(Buffer.from(`${file}: ${e.message}\n`)));
    const entry = { pids: () => (child.pid ? [child.pid] : []) };
    if (!toLog) {
      live.add(entry);
      void exited.then(() => live.delete(entry));
    }
    return { child, exited, out: () => own };
  };

  const epmd = launch(['/usr/bin/epmd', '-port', String(epmdPort), '-address', distAddress]);
  let beam: ReturnType<typeof launch> | undefined;
  const entry = { pids: () => [beam?.child.pid, epmd.child.pid].filter((p): p is number => !!p), dir };
  live.add(entry);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (beam) await end(beam.child, beam.exited, 'SIGTERM', 10_000);
      await end(epmd.child, epmd.exited, 'SIGTERM', 2000);
      live.delete(entry);
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  try {
    // epmd answers before the broker registers with it
    for (let i = 0; ; i++) {
      if (epmd.child.exitCode !== null || i > 100) throw new Error(`epmd did not start: ${log}`);
      if (await portOpen(wrap, epmdPort)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    beam = launch([RABBITMQ_SERVER]);
    const b = beam;
    const readyMs = opts.readyMs ?? 60_000;
    const t0 = performance.now();
    while (!log.includes('Server startup complete')) {
      if (b.child.exitCode !== null || b.child.signalCode !== null)
        throw new Error(
          `rabbitmq-server exited (${b.child.exitCode ?? b.child.signalCode}): ${log.slice(-4000)}`,
        );
      if (performance.now() - t0 > readyMs)
        throw new Error(`rabbitmq-server not ready in ${readyMs} ms: ${log.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pid = b.child.pid as number;
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    if (comm !== 'beam.smp') throw new Error(`pid ${pid} is ${comm}, not beam.smp: the wrap must exec`);
    const ctl = (args: string[], timeoutMs = 60_000) => {
      const c = launch([RABBITMQ_CTL, '-n', nodename, ...args], false);
      const t = setTimeout(() => c.child.kill('SIGKILL'), timeoutMs);
      return c.exited.then((code) => {
        clearTimeout(t);
        return { code, out: c.out() };
      });
    };
    return {
      pid,
      epmdPid: epmd.child.pid as number,
      address,
      port,
      url: `amqp://guest:guest@${address.includes(':') ? `[${address}]` : address}:${port}`,
      nodename,
      dir,
      config,
      log: () => log,
      exited: b.exited,
      ctl,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Whether something listens on 127.0.0.1:port where `wrap` runs (a namespace has its own loopback). */
async function portOpen(wrap: string[], port: number): Promise<boolean> {
  if (wrap.length === 0) {
    const net = await import('node:net');
    return new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
  }
  // bash's /dev/tcp inside the namespace, bounded
  const [file, ...args] = [...wrap, 'timeout', '2', 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`];
  const child = spawn(file, args, { stdio: 'ignore' });
  return new Promise((r) => child.on('close', (code) => r(code === 0)));
}

export interface ClientOptions {
  url: string;
  queue: string;
  /** Message size in KiB (default 256, seed 000's). */
  kib?: number;
  count: number;
  seconds: number;
  wrap?: string[];
  /** `stream`: a durable stream queue replicated to 2 nodes (default classic: transient). */
  type?: 'classic' | 'stream';
  /** Publisher confirms outstanding at most (default 256). */
  unconfirmed?: number;
}

export function startClient(role: 'publish' | 'consume', o: ClientOptions): AmqpClient {
  installHandlers();
  const argv = [
    ...(o.wrap ?? []),
    process.execPath,
    '--import',
    'tsx',
    CLIENT,
    role,
    o.url,
    o.queue,
    String(o.kib ?? 256),
    String(o.count),
    String(o.seconds),
    o.type ?? 'classic',
    String(o.unconfirmed ?? 256),
  ];
  const [file, ...args] = argv;
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...process.env, [OWNER_ENV]: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d) => {
    err = (err + d).slice(-8000);
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const entry = { pids: () => (child.pid ? [child.pid] : []) };
  live.add(entry);
  void exited.then(() => live.delete(entry));
  const bound = setTimeout(() => child.kill('SIGKILL'), (o.seconds + 20) * 1000);
  void exited.then(() => clearTimeout(bound));
  let onReady: (v: { pid: number; localPort: number }) => void = () => {};
  let onDone: (v: ClientResult) => void = () => {};
  const ready = new Promise<{ pid: number; localPort: number }>((res, rej) => {
    onReady = res;
    void exited.then((code) => rej(new Error(`amqp ${role} exited (${code}) before it connected: ${err}`)));
  });
  const done = new Promise<ClientResult>((res, rej) => {
    onDone = res;
    void exited.then((code) => rej(new Error(`amqp ${role} exited (${code}) without a result: ${err}`)));
  });
  // a caller that awaits only one of them must not get an unhandled rejection from the other
  ready.catch(() => {});
  done.catch(() => {});
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    if (!l.startsWith('{')) return;
    const msg = JSON.parse(l) as { event: string } & Record<string, unknown>;
    if (msg.event === 'ready') onReady({ pid: msg.pid as number, localPort: msg.localPort as number });
    if (msg.event === 'done') onDone(msg as unknown as ClientResult);
  });
  return {
    pid: child.pid as number,
    ready,
    done,
    async stop() {
      await end(child, exited, 'SIGTERM', 3000);
      return Promise.race([done, Promise.resolve(undefined)]).catch(() => undefined);
    },
  };
}
