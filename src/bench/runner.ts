// The bench runner: runs the two ends of a point as child processes (receiver first, sender once
// the receiver's ready line arrived), enforces a timeout per run, and on any failure, timeout or
// abort (the CLI's signals, src/cli/signals.ts) kills both ends' process groups and reaps them before
// it reports. Then repeats and medians.

import { performance } from 'node:perf_hooks';
import { SockbufError } from '../errors.js';
import { Child, nodeCommand, type SpawnSpec, sockbufCommand } from '../sys/process.js';
import { columnStats } from './column-stats.js';
import { MAX_EVENT_LINE, parseEventLine, READY_EVENT, substitute } from './ends.js';
import type { Placement, Role } from './placement.js';
import type { EndCommand, EndOutput, Ends, Point, Row, RunOutput, Scenario } from './scenario.js';

/** How many stderr lines of each end are kept for error reports. */
export const STDERR_TAIL = 20;

/**
 * A run that failed: `end` is the end that failed, `endExitCode` its exit status when it exited with
 * one (the CLI passes an end's 2 or 3 on).
 */
export class RunFailure extends SockbufError {
  /** A failure of `end` (the receiver or the sender), with its exit status when it exited with one. */
  constructor(
    message: string,
    readonly end: Role | undefined,
    readonly endExitCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, 'ERR_SOCKBUF_RUN_FAILED', { cause: options?.cause });
    this.name = 'RunFailure';
  }
}

/** The runner itself got SIGINT/SIGTERM/SIGHUP: both ends were stopped (the CLI exits 128 + its number). */
export class Interrupted extends SockbufError {
  /** From runPoints: the points that had finished runs when it stopped, with their medians. */
  results?: PointResult[];
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}; both ends stopped`, 'ERR_SOCKBUF_INTERRUPTED');
    this.name = 'Interrupted';
  }
}

// ---- one end as a child process (src/sys/process.ts) -----------------------------------------

/** The process that runs an end command, before placement. */
export function endSpawnSpec(cmd: EndCommand, vars: Record<string, unknown>): SpawnSpec {
  if ('sockbuf' in cmd) return sockbufCommand(substitute(cmd.sockbuf, vars));
  return nodeCommand(cmd.module, substitute(cmd.args ?? [], vars));
}

/** An end: a child in its own process group with a parent-death signal, its JSON lines collected. */
class EndProcess extends Child {
  readonly out: EndOutput;
  /** Resolves once the process was reaped and its output read. */
  readonly closed: Promise<void>;

  constructor(
    readonly role: Role,
    spec: SpawnSpec,
  ) {
    super(spec, { stderrTail: STDERR_TAIL, maxLine: MAX_EVENT_LINE });
    const out: EndOutput = { lines: [], code: null, signal: null, stderrTail: this.stderrTail };
    this.out = out;
    this.onLine((line) => {
      const obj = parseEventLine(line);
      if (obj) out.lines.push(obj);
    });
    this.closed = this.exited.then(({ code, signal }) => {
      out.code = code;
      out.signal = signal;
    });
  }

  /** Each JSON object line. */
  onEvent(listener: (line: Record<string, unknown>) => void): void {
    this.onLine((line) => {
      const obj = parseEventLine(line);
      if (obj) listener(obj);
    });
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
      onAbort = () => reject(opts.signal?.reason ?? new DOMException('aborted', 'AbortError'));
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  quiet(interrupted);
  const start = (
    role: Role,
    cmd: EndCommand,
    vars: Record<string, unknown>,
    env?: Record<string, string>,
  ): EndProcess => {
    const spec = endSpawnSpec(cmd, vars);
    const p = new EndProcess(role, placement.command(role, env ? { ...spec, env } : spec));
    procs.push(p);
    return p;
  };
  const failed = (p: EndProcess, what: string): RunFailure => {
    return new RunFailure(
      `the ${p.role} ${p.describeExit()} ${what}; both ends killed\n${tail(p.out, p.role)}`,
      p.role,
      p.out.code ?? undefined,
    );
  };
  try {
    const vars = { host: placement.host };
    const rx = start('receiver', ends.receiver, vars);
    const ready = await Promise.race([
      new Promise<Record<string, unknown>>((res) => rx.onEvent((l) => l.event === READY_EVENT && res(l))),
      quiet(
        rx.closed.then(() => {
          throw failed(rx, 'before it was ready');
        }),
      ),
      interrupted,
    ]);
    // a serve far end's secret (remote placement): the sender's hellos carry it, from its environment
    // (never argv); it is not kept with the results
    const secret = typeof ready.secret === 'string' ? ready.secret : undefined;
    delete ready.secret;
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
    const tx = start('sender', ends.sender, senderVars, secret ? { SOCKBUF_SECRET: secret } : undefined);
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
    // a receiver stopped by SIGTERM exits 143 (every sockbuf command does) or dies of it
    const rxOk = rx.out.code === 0 || (term && (rx.out.code === 143 || rx.out.signal === 'SIGTERM'));
    if (!rxOk) throw failed(rx, 'after the sender finished');
    return { receiver: rx.out, sender: tx.out, seconds: (performance.now() - t0) / 1000 };
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    await Promise.all(procs.map((p) => p.stop().then(() => p.closed)));
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

/** Progress of a benchmark run, as the CLI's bar shows it: the point, the repeat and how many are done. */
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
  /**
   * Stop early: both ends are killed and reaped, then it rejects with the abort's reason, an
   * Interrupted when the reason is a signal's name (what src/cli/signals.ts aborts with). The runner
   * installs no signal handler of its own: the process's signals are its caller's.
   */
  signal?: AbortSignal;
}

/** An abort's reason as runPoints rejects with it: a signal's name becomes an Interrupted. */
function abortReason(reason: unknown): unknown {
  return typeof reason === 'string' && /^SIG[A-Z]+$/.test(reason)
    ? new Interrupted(reason as NodeJS.Signals)
    : reason;
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
  const forward = () => ctl.abort(abortReason(opts.signal?.reason));
  if (opts.signal?.aborted) forward();
  else opts.signal?.addEventListener('abort', forward, { once: true });
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
            throw new RunFailure(`${which}: ${err.message}`, err.end, err.endExitCode, { cause: err });
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
  } catch (err) {
    // stopped by a signal: what it had goes with the error, for the caller to report
    if (err instanceof Interrupted)
      err.results = results.filter((r) => r.runs.length).map((r) => ({ ...r, ...columnStats(r.runs) }));
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', forward);
    await scenario.tearDown?.(params);
  }
  for (const res of results) Object.assign(res, columnStats(res.runs));
  return results;
}
