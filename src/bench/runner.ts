// The bench runner: runs the two ends of a point as child processes (receiver first, sender once
// the receiver's ready line arrived), enforces a timeout per run, and on any failure, timeout or
// signal kills both ends' process groups and reaps them before it reports. Then repeats and medians.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { runningInGroup } from '../observe/proc.js';
import { parseEventLine, READY_EVENT, substitute } from './ends.js';
import { type Placement, type Role, type SpawnSpec, which } from './placement.js';
import type { EndCommand, EndOutput, Ends, Point, Row, RunOutput, Scenario } from './scenario.js';
import { columnStats } from './stats.js';

/** How many stderr lines of each end are kept for error reports. */
export const STDERR_TAIL = 20;
export const DEFAULT_TIMEOUT_SECONDS = 60;

/** A run that failed; `exitCode` is what the CLI exits with (an end's 2 or 3 is passed on, else 1). */
export class RunFailure extends Error {
  readonly exitCode: number;
  constructor(
    message: string,
    readonly end: Role | undefined,
    exitCode = 1,
  ) {
    super(message);
    this.name = 'RunFailure';
    this.exitCode = exitCode;
  }
}

/** The runner itself got SIGINT/SIGTERM/SIGHUP: both ends were stopped; exit 128 + signal number. */
export class Interrupted extends Error {
  readonly exitCode: number;
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}; both ends stopped`);
    this.name = 'Interrupted';
    this.exitCode = 128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as Record<string, number>)[signal];
  }
}

// ---- turning an end into a process ------------------------------------------------------------

const HERE = fileURLToPath(import.meta.url);
const UNDER_TSX = HERE.endsWith('.ts');

function tsxLoader(): string {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return 'tsx';
  }
}

/** `node [--import tsx] FILE args`: .ts files (the sources, under tests) go through tsx. */
function nodeCommand(file: string, args: string[]): SpawnSpec {
  const pre = file.endsWith('.ts') ? ['--import', tsxLoader()] : [];
  return { file: process.execPath, args: [...pre, file, ...args] };
}

/** The `sockbuf` CLI entry next to this module (dist/cli/main.js, or src/cli/main.ts under tsx). */
export function sockbufEntry(): string {
  return resolve(dirname(HERE), '..', 'cli', UNDER_TSX ? 'main.ts' : 'main.js');
}

/** The process that runs an end command, before placement. */
export function endSpawnSpec(cmd: EndCommand, vars: Record<string, unknown>): SpawnSpec {
  if ('sockbuf' in cmd) return nodeCommand(sockbufEntry(), substitute(cmd.sockbuf, vars));
  return nodeCommand(cmd.module, substitute(cmd.args ?? [], vars));
}

// ---- one end as a child process ---------------------------------------------------------------

/** Process groups of ends still alive, killed synchronously if the runner exits regardless. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: already gone
  }
}

/** SIGKILLs a process group and waits (up to 2 s) until no member of it runs any more. */
async function killAndWaitGroup(pgid: number): Promise<void> {
  killGroup(pgid, 'SIGKILL');
  for (let waited = 0; runningInGroup(pgid).length && waited < 2000; waited += 5) await sleep(5);
}

/**
 * setpriv (util-linux) gives each end a parent-death signal: should the runner itself be SIGKILLed,
 * and so unable to clean up, the kernel kills the ends (not their own children) for it.
 */
const SETPRIV = which('setpriv');
function withParentDeathSignal(spec: SpawnSpec): SpawnSpec {
  if (!SETPRIV) return spec;
  return { ...spec, file: SETPRIV, args: ['--pdeathsig', 'SIGKILL', '--', spec.file, ...spec.args] };
}

class EndProcess {
  readonly out: EndOutput = { lines: [], code: null, signal: null, stderrTail: [] };
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves once the process was reaped and its output read. */
  readonly closed: Promise<void>;
  private lineListeners: ((line: Record<string, unknown>) => void)[] = [];
  private exited = false;

  constructor(
    readonly role: Role,
    spec: SpawnSpec,
  ) {
    installExitHook();
    const run = withParentDeathSignal(spec);
    // detached: the end leads its own process group, so killing -pid also takes its children.
    this.child = spawn(run.file, run.args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: spec.env ? { ...process.env, ...spec.env } : process.env,
    });
    const pid = this.child.pid;
    if (pid !== undefined) liveGroups.add(pid);
    const stdoutDone = new Promise<void>((res) => {
      const rl = createInterface({ input: this.child.stdout });
      rl.on('line', (line) => {
        const obj = parseEventLine(line);
        if (!obj) return;
        this.out.lines.push(obj);
        for (const l of this.lineListeners) l(obj);
      });
      rl.on('close', res);
    });
    const stderrDone = new Promise<void>((res) => {
      const rl = createInterface({ input: this.child.stderr });
      rl.on('line', (line) => {
        this.out.stderrTail.push(line);
        if (this.out.stderrTail.length > STDERR_TAIL) this.out.stderrTail.shift();
      });
      rl.on('close', res);
    });
    const exited = new Promise<void>((res) => {
      this.child.once('error', (err) => {
        this.out.stderrTail.push(`cannot start ${spec.file}: ${err.message}`);
        this.exited = true;
        res();
      });
      this.child.once('exit', (code, signal) => {
        this.out.code = code;
        this.out.signal = signal;
        this.exited = true;
        res();
      });
    });
    this.closed = exited.then(async () => {
      // Output still in the pipes is read; a stray holder of the pipe cannot keep us waiting.
      const timer = setTimeout(() => {
        this.child.stdout.destroy();
        this.child.stderr.destroy();
      }, 2000);
      await Promise.all([stdoutDone, stderrDone]);
      clearTimeout(timer);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  onLine(listener: (line: Record<string, unknown>) => void): void {
    this.lineListeners.push(listener);
  }

  /** Signals the whole process group. */
  signal(sig: NodeJS.Signals): void {
    if (this.child.pid !== undefined) killGroup(this.child.pid, sig);
  }

  /** Kills the group and waits until the end was reaped. Safe to call more than once. */
  async stop(): Promise<void> {
    this.signal('SIGKILL');
    await this.closed;
    if (this.child.pid !== undefined) {
      await killAndWaitGroup(this.child.pid); // anything of the group that outlived its leader
      liveGroups.delete(this.child.pid);
    }
  }

  /** "the sender exited with code 1" / "was killed by SIGSEGV". */
  describeExit(): string {
    if (this.out.code !== null) return `exited with code ${this.out.code}`;
    if (this.out.signal !== null) return `was killed by ${this.out.signal}`;
    return 'could not be started';
  }
}

/** Marks a promise's rejection as handled (it is raced elsewhere) and returns it. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

function tail(end: EndOutput, role: Role): string {
  if (!end.stderrTail.length) return `  (the ${role} wrote nothing on stderr)`;
  return [`  last stderr lines of the ${role}:`, ...end.stderrTail.map((l) => `  | ${l}`)].join('\n');
}

// ---- one run ----------------------------------------------------------------------------------

export interface RunOptions {
  placement: Placement;
  timeoutSeconds: number;
  /** Aborting (with an Interrupted as reason, or anything) stops both ends and rejects. */
  signal?: AbortSignal;
}

/**
 * Runs the two ends of one point once: start the receiver, wait for its ready line, start the
 * sender with `{port}` etc. filled from it, wait for the sender to exit, then for the receiver
 * (SIGTERM first if `receiverStop` is 'term'). Both ends are killed and reaped before this returns
 * or throws, whatever happened. Throws RunFailure naming the end that failed, or the abort reason.
 */
export async function runEnds(ends: Ends, opts: RunOptions): Promise<RunOutput> {
  const t0 = performance.now();
  const { placement } = opts;
  const procs: EndProcess[] = [];
  let stage = 'the receiver to be ready';
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  // Settles (rejects) only on timeout or abort; raced against every wait below.
  const interrupted = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const states = procs.map((p) => `the ${p.role} ${p.running ? 'was still running' : p.describeExit()}`);
      const tails = procs.map((p) => tail(p.out, p.role)).join('\n');
      reject(
        new RunFailure(
          `timed out after ${opts.timeoutSeconds} s waiting for ${stage} (${states.join(', ')}); both ends killed\n${tails}`,
          undefined,
        ),
      );
    }, opts.timeoutSeconds * 1000);
    if (opts.signal) {
      onAbort = () => reject(opts.signal?.reason ?? new Error('aborted'));
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  quiet(interrupted);
  const start = (role: Role, cmd: EndCommand, vars: Record<string, unknown>): EndProcess => {
    const p = new EndProcess(role, placement.command(role, endSpawnSpec(cmd, vars)));
    procs.push(p);
    return p;
  };
  const failed = (p: EndProcess, what: string): RunFailure => {
    const code = p.out.code === 2 || p.out.code === 3 ? p.out.code : 1;
    return new RunFailure(
      `the ${p.role} ${p.describeExit()} ${what}; both ends killed\n${tail(p.out, p.role)}`,
      p.role,
      code,
    );
  };
  try {
    const vars = { host: placement.host };
    const rx = start('receiver', ends.receiver, vars);
    const ready = await Promise.race([
      new Promise<Record<string, unknown>>((res) => rx.onLine((l) => l.event === READY_EVENT && res(l))),
      quiet(
        rx.closed.then(() => {
          throw failed(rx, 'before it was ready');
        }),
      ),
      interrupted,
    ]);
    rx.out.ready = ready;

    stage = 'the sender to finish';
    let senderVars: Record<string, unknown>;
    try {
      senderVars = { ...ready, ...vars };
      delete senderVars.event;
      substitute('sockbuf' in ends.sender ? ends.sender.sockbuf : (ends.sender.args ?? []), senderVars);
    } catch (err) {
      throw new RunFailure(`cannot start the sender: ${(err as Error).message}`, 'sender');
    }
    const tx = start('sender', ends.sender, senderVars);
    // The receiver may finish first (its work done, exit 0); any other exit of either end fails.
    const rxEarly = quiet(
      rx.closed.then(() => {
        if (tx.running && rx.out.code !== 0) throw failed(rx, 'while the sender was running');
      }),
    );
    await Promise.race([tx.closed, quiet(rxEarly.then(() => tx.closed)), interrupted]);
    if (tx.out.code !== 0) throw failed(tx, 'before it finished');

    stage = 'the receiver to finish';
    const term = ends.receiverStop === 'term';
    if (term && rx.running) rx.signal('SIGTERM');
    await Promise.race([rx.closed, interrupted]);
    const rxOk = rx.out.code === 0 || (term && rx.out.signal === 'SIGTERM');
    if (!rxOk) throw failed(rx, 'after the sender finished');
    return { receiver: rx.out, sender: tx.out, seconds: (performance.now() - t0) / 1000 };
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    await Promise.all(procs.map((p) => p.stop()));
  }
}

// ---- repeats over the points of a scenario ------------------------------------------------------

/** One point's results: every run's row, and median/min/max of each numeric column. */
export interface PointResult {
  /** The point's labels joined with a space, e.g. "adaptive 64K". */
  name: string;
  labels: Point;
  runs: Row[];
  median: Record<string, number>;
  min: Record<string, number>;
  max: Record<string, number>;
}

export interface Progress {
  done: number;
  total: number;
  /** The run about to start (undefined once all are done). */
  next?: { point: string; repeat: number };
}

export interface RunPointsOptions {
  placement: Placement;
  repeat: number;
  timeoutSeconds: number;
  onProgress?: (p: Progress) => void;
  /** Stop early (the runner's own signals are handled too, see handleSignals). */
  signal?: AbortSignal;
  /** Turn SIGINT/SIGTERM/SIGHUP of this process into a clean stop (default true). */
  handleSignals?: boolean;
}

export function pointName(point: Point): string {
  return Object.values(point).join(' ');
}

/**
 * Runs every point `repeat` times (round-robin: all points once, then again, so drift hits every
 * point alike) and returns one PointResult per point, in the scenario's order. The first failed run
 * stops the benchmark (RunFailure, naming the point and the run).
 */
export async function runPoints<P>(
  scenario: Scenario<P>,
  params: P,
  opts: RunPointsOptions,
): Promise<PointResult[]> {
  const points = scenario.points(params);
  const results: PointResult[] = points.map((labels) => ({
    name: pointName(labels),
    labels,
    runs: [],
    median: {},
    min: {},
    max: {},
  }));
  const total = points.length * opts.repeat;
  const ctl = new AbortController();
  const forward = () => ctl.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', forward, { once: true });
  const signals: NodeJS.Signals[] = opts.handleSignals === false ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const onSignal = (sig: NodeJS.Signals) => ctl.abort(new Interrupted(sig));
  for (const s of signals) process.on(s, onSignal);
  try {
    let done = 0;
    for (let r = 1; r <= opts.repeat; r++) {
      for (const [i, point] of points.entries()) {
        if (ctl.signal.aborted) throw ctl.signal.reason;
        const name = results[i].name;
        opts.onProgress?.({ done, total, next: { point: name, repeat: r } });
        const which = `run ${r}/${opts.repeat} of point "${name}"`;
        const runOnce = (ends: Ends) =>
          runEnds(ends, {
            placement: opts.placement,
            timeoutSeconds: opts.timeoutSeconds,
            signal: ctl.signal,
          });
        let out: RunOutput;
        try {
          await scenario.setUp?.(point, params);
          if (scenario.search) {
            results[i].runs.push(await scenario.search(point, params, runOnce));
            done++;
            continue;
          }
          out = await runOnce(scenario.ends(point, params));
        } catch (err) {
          if (err instanceof RunFailure)
            throw new RunFailure(`${which}: ${err.message}`, err.end, err.exitCode);
          throw err;
        }
        try {
          results[i].runs.push(scenario.row(out, point, params));
        } catch (err) {
          const tails = [tail(out.receiver, 'receiver'), tail(out.sender, 'sender')].join('\n');
          throw new RunFailure(
            `${which}: cannot read its result: ${(err as Error).message}\n${tails}`,
            undefined,
          );
        }
        done++;
      }
    }
    opts.onProgress?.({ done, total });
  } finally {
    for (const s of signals) process.off(s, onSignal);
    opts.signal?.removeEventListener('abort', forward);
    await scenario.tearDown?.(params);
  }
  for (const res of results) Object.assign(res, columnStats(res.runs));
  return results;
}
