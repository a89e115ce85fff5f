// The one place that starts processes. A child runs with a parent-death signal (setpriv --pdeathsig
// SIGKILL, util-linux: should this process die without cleaning up, even by SIGKILL, the kernel kills
// the child; it does not reach the child's own children, so every level that starts a process sets
// its own), by default in its own process group (stop() takes its children too), its stdout read as
// lines (JSON lines for the ends) and the last lines of its stderr kept for error reports. Groups
// still alive when this process exits are killed. runSync() is for short commands such as `ip`.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fn } from './libc.js';
import { sockbufEntry } from './package.js';
import { SockbufError } from './sockbuf-error.js';
import { procRoot } from './sysctl.js';

/** A process to start: what a placement wraps (taskset, ip netns exec) and a Child runs. */
export interface SpawnSpec {
  file: string;
  args: string[];
  /** Added to (not replacing) this process's environment. */
  env?: Record<string, string>;
}

function tsxLoader(): string {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return 'tsx';
  }
}

/** `node [--import tsx] FILE args`: a .ts file (the sources, under tests) goes through tsx. */
export function nodeCommand(file: string, args: string[] = []): SpawnSpec {
  const pre = file.endsWith('.ts') ? ['--import', tsxLoader()] : [];
  return { file: process.execPath, args: [...pre, file, ...args] };
}

/** sockbuf itself with these arguments (`sockbufCommand(['sink', 'tcp'])`). */
export function sockbufCommand(args: string[]): SpawnSpec {
  return nodeCommand(sockbufEntry(), args);
}

/** Finds an executable on PATH, or undefined. */
export function which(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const f = join(dir, name);
    try {
      accessSync(f, constants.X_OK);
      return f;
    } catch {
      // not here
    }
  }
  return undefined;
}

// ---- processes by pid -------------------------------------------------------------------------

/**
 * True while a process with this pid runs (also one we may not signal). A zombie is dead: it only
 * waits to be reaped, which an init that does not reap (some containers' pid 1) never does.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const s = statOf(pid, '/proc');
  return s === undefined || running(s);
}

/** State, parent and process group of a process from /proc/PID/stat text (fields 3–5). Pure. */
export function parseProcStat(text: string): { state: string; ppid: number; pgrp: number } | undefined {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  if (rest.length < 3) return undefined;
  return { state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]) };
}

function statOf(pid: number | string, root?: string) {
  try {
    return parseProcStat(readFileSync(join(procRoot(root), String(pid), 'stat'), 'utf8'));
  } catch {
    return undefined;
  }
}

const running = (s: ReturnType<typeof parseProcStat>) =>
  s !== undefined && s.state !== 'Z' && s.state !== 'X';

/** True while the process exists and is not a zombie (a zombie has exited; only its reaping is left). @internal (exported for its test) */
export function processRunning(pid: number, root?: string): boolean {
  return running(statOf(pid, root));
}

/** The pids of a process group's members that are still running (not zombies). */
export function runningInGroup(pgid: number, root?: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync(procRoot(root))) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(name, root);
    if (s && s.pgrp === pgid && running(s)) out.push(Number(name));
  }
  return out;
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone
  }
}

// ---- children ---------------------------------------------------------------------------------

const SETPRIV = which('setpriv');

/** The same command under `setpriv --pdeathsig SIGKILL` (unchanged where setpriv is missing). */
export function withParentDeathSignal(spec: SpawnSpec): SpawnSpec {
  if (!SETPRIV) return spec;
  return { ...spec, file: SETPRIV, args: ['--pdeathsig', 'SIGKILL', '--', spec.file, ...spec.args] };
}

const PR_SET_PDEATHSIG = 1;

/**
 * Clears this process's own parent-death signal (prctl PR_SET_PDEATHSIG 0): what a process started
 * with one calls once it is meant to outlive its parent (the `lab up` holder, after its hand-shake).
 */
export function clearParentDeathSignal(): void {
  fn('prctl')(PR_SET_PDEATHSIG, 0, 0, 0, 0);
}

/** Process groups of children still alive, killed synchronously if this process exits regardless. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) kill(-pgid, 'SIGKILL');
  });
}

export interface ChildOptions {
  /** Its own process group (default): signals and stop() reach the children it starts too. */
  group?: boolean;
  /** 'pipe' (default): stdout read as lines, stderr's tail kept; 'inherit': both pass through. */
  output?: 'pipe' | 'inherit';
  /** 'pipe' gives `stdin` for writing; default 'ignore' ('inherit' with output 'inherit'). */
  input?: 'ignore' | 'pipe' | 'inherit';
  /** stderr lines kept (default 20). */
  stderrTail?: number;
  /** A stdout line longer than this is skipped (default 1 MiB). */
  maxLine?: number;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Splits a byte stream into lines; a line longer than `max` is dropped whole. */
function lines(stream: NodeJS.ReadableStream, max: number, onLine: (line: string) => void): Promise<void> {
  let buf = '';
  let skipping = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const line = buf + chunk.slice(start, nl);
      buf = '';
      start = nl + 1;
      if (!skipping && line.length <= max) onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
      skipping = false;
    }
    if (!skipping) buf += chunk.slice(start);
    if (buf.length > max) {
      buf = '';
      skipping = true;
    }
  });
  return new Promise((resolve) => {
    const done = () => {
      if (buf && !skipping) onLine(buf);
      buf = '';
      resolve();
    };
    stream.once('end', done);
    stream.once('close', done);
  });
}

/** A running child process; see the top of this file. */
export class Child {
  readonly process: ChildProcess;
  /** The last lines of its stderr (output 'pipe'). */
  readonly stderrTail: string[] = [];
  /** Why it could not be started (spawn's error: ENOENT, EACCES …), when it could not. */
  startError?: NodeJS.ErrnoException;
  code: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  /** Resolves once it exited and its output was read (its pipes closed, or 2 s after exit). */
  readonly exited: Promise<ChildExit>;
  private readonly group: boolean;
  private lineListeners: ((line: string) => void)[] = [];
  private done = false;

  constructor(spec: SpawnSpec, opts: ChildOptions = {}) {
    installExitHook();
    this.group = opts.group ?? true;
    const run = withParentDeathSignal(spec);
    const output = opts.output ?? 'pipe';
    const input = opts.input ?? (output === 'inherit' ? 'inherit' : 'ignore');
    this.process = spawn(run.file, run.args, {
      detached: this.group,
      stdio: [input, output, output],
      env: spec.env ? { ...process.env, ...spec.env } : process.env,
    });
    if (this.group && this.process.pid !== undefined) liveGroups.add(this.process.pid);
    const maxTail = opts.stderrTail ?? 20;
    const outDone = this.process.stdout
      ? lines(this.process.stdout, opts.maxLine ?? 1 << 20, (l) => {
          for (const f of this.lineListeners) f(l);
        })
      : Promise.resolve();
    const errDone = this.process.stderr
      ? lines(this.process.stderr, 64 << 10, (l) => {
          this.stderrTail.push(l);
          if (this.stderrTail.length > maxTail) this.stderrTail.shift();
        })
      : Promise.resolve();
    const exit = new Promise<void>((resolve) => {
      this.process.once('error', (err) => {
        this.startError = err;
        this.stderrTail.push(`cannot start ${spec.file}: ${err.message}`);
        resolve();
      });
      this.process.once('exit', (code, signal) => {
        this.code = code;
        this.signalCode = signal;
        resolve();
      });
    });
    this.exited = exit.then(async () => {
      this.done = true;
      // Output still in the pipes is read; a grandchild holding them cannot keep us waiting.
      const t = setTimeout(() => {
        this.process.stdout?.destroy();
        this.process.stderr?.destroy();
      }, 2000);
      await Promise.all([outDone, errDone]);
      clearTimeout(t);
      return { code: this.code, signal: this.signalCode };
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** False once it exited (or could not be started). */
  get running(): boolean {
    return !this.done && this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Each line of its stdout (output 'pipe'), without the newline. */
  onLine(listener: (line: string) => void): void {
    this.lineListeners.push(listener);
  }

  /** Signals its process group (or only it, when it has none of its own). */
  signal(sig: NodeJS.Signals): void {
    if (this.pid !== undefined) kill(this.group ? -this.pid : this.pid, sig);
  }

  /**
   * Stops it and waits until it was reaped: SIGKILL now, or SIGTERM and SIGKILL `graceSeconds` later;
   * then kills what of its group outlived it and waits (up to 2 s) until none of it runs. Idempotent.
   */
  async stop(graceSeconds = 0): Promise<ChildExit> {
    const t = graceSeconds > 0 ? setTimeout(() => this.signal('SIGKILL'), graceSeconds * 1000) : undefined;
    this.signal(graceSeconds > 0 ? 'SIGTERM' : 'SIGKILL');
    const exit = await this.exited;
    clearTimeout(t);
    const pid = this.pid;
    if (this.group && pid !== undefined) {
      kill(-pid, 'SIGKILL');
      for (let waited = 0; runningInGroup(pid).length && waited < 2000; waited += 5) await sleep(5);
      liveGroups.delete(pid);
    }
    return exit;
  }

  /** Lets it outlive this process: no longer killed at exit, pipes closed, not keeping the loop. */
  release(): void {
    if (this.pid !== undefined) liveGroups.delete(this.pid);
    this.process.stdin?.destroy();
    this.process.stdout?.destroy();
    this.process.stderr?.destroy();
    this.process.unref();
  }

  /** "exited with code 1" / "was killed by SIGSEGV" / "could not be started". */
  describeExit(): string {
    if (this.code !== null) return `exited with code ${this.code}`;
    if (this.signalCode !== null) return `was killed by ${this.signalCode}`;
    return 'could not be started';
  }
}

/**
 * Runs a command to its end with output passed through (input too); resolves to its exit status.
 * When `signal` aborts, the command gets the signal named by its reason (SIGINT or SIGTERM; else
 * SIGTERM) and is waited for, so that it can print what it had: the caller bounds the wait.
 */
export async function runInherit(spec: SpawnSpec, opts: { signal?: AbortSignal } = {}): Promise<number> {
  const child = new Child(spec, { group: false, output: 'inherit' });
  const stop = () => child.signal(opts.signal?.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
  if (opts.signal?.aborted) stop();
  else opts.signal?.addEventListener('abort', stop, { once: true });
  const { code, signal } = await child.exited.finally(() => opts.signal?.removeEventListener('abort', stop));
  if (code === null && signal === null) throw notStarted(child);
  return code ?? 128;
}

/** A child that could not be started: spawn's errno name (ENOENT …) and errno, its message as said. */
function notStarted(child: Child): SockbufError {
  const e = child.startError;
  return new SockbufError(child.stderrTail.join('\n'), e?.code ?? 'ERR_SOCKBUF_COMMAND_FAILED', {
    cause: e,
    errno: typeof e?.errno === 'number' ? Math.abs(e.errno) : undefined,
    syscall: e?.syscall,
  });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, stdout and stderr collected; SIGKILLed after `timeoutMs`. */
export async function run(spec: SpawnSpec, timeoutMs = 60_000): Promise<RunResult> {
  const child = new Child(spec, { stderrTail: 10_000 });
  const out: string[] = [];
  child.onLine((l) => out.push(l));
  const timer = setTimeout(() => child.signal('SIGKILL'), timeoutMs);
  const { code, signal } = await child.exited;
  clearTimeout(timer);
  await child.stop(); // what of its group outlived it
  if (code === null && signal === null) throw notStarted(child);
  return { code: code ?? 128, stdout: out.join('\n'), stderr: child.stderrTail.join('\n') };
}

/** A short command that failed: its stderr is in the message and in `stderr`. */
export class CommandError extends SockbufError {
  constructor(
    readonly command: string,
    /** Its exit status (null when a signal ended it). */
    readonly status: number | null,
    readonly stderr: string,
  ) {
    super(
      `${command} failed${status === null ? '' : ` (exit ${status})`}${stderr ? `: ${stderr}` : ''}`,
      'ERR_SOCKBUF_COMMAND_FAILED',
    );
    this.name = 'CommandError';
  }
}

/**
 * Runs a short command (such as `ip`) synchronously; returns its stdout, throws CommandError when it
 * cannot start or exits non-zero.
 */
export function runSync(file: string, args: string[], opts: { timeoutMs?: number } = {}): string {
  const r = spawnSync(file, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: opts.timeoutMs ?? 30_000,
    killSignal: 'SIGKILL',
  });
  const cmd = [file, ...args].join(' ');
  if (r.error) throw new CommandError(cmd, null, r.error.message);
  if (r.status !== 0) throw new CommandError(cmd, r.status, (r.stderr ?? '').trim());
  return r.stdout;
}
