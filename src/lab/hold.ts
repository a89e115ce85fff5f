// Labs that outlive one call, and commands run in a lab: `lab -- CMD` (runUnderLab), `lab up` (upLab:
// a holder process makes the lab and holds it), `lab exec` (execInLab) and `lab down` (downLabs).
//
// The hand-shake of lab up with its holder (`sockbuf lab hold`): the holder prints one JSON line,
// {info, measured} or {error, code}, and waits; lab up answers `ok` on the holder's stdin; the
// holder clears its parent-death signal and answers `held`; only then does lab up let it go. Until
// then the holder dies with lab up (the kernel kills it, also when lab up is SIGKILLed), so lab up
// interrupted at any point leaves either nothing, or a dead holder's lab that cleanStale (`lab down
// --stale`) removes.

import { EnvironmentError, UsageError } from '../errors.js';
import { parseBoundedJson } from '../policy/json.js';
import { OPTIONS } from '../policy/option-registry.js';
import { formatDuration } from '../policy/units.js';
import {
  alive,
  Child,
  clearParentDeathSignal,
  runInherit,
  type SpawnSpec,
  sockbufCommand,
} from '../sys/process.js';
import { assertRoot, cleanStale, Lab, type LabOptions } from './lab.js';
import type { LabMeasurement } from './measure.js';
import { netnsCommand } from './netns.js';
import {
  type HostName,
  heldLabs,
  LAB_ENV,
  type LabInfo,
  type LabListing,
  listLabs,
  MAX_STATE_BYTES,
} from './registry.js';

/** A lab held up for later commands (`sockbuf lab up`): its name, its hosts and their addresses. */
export interface LabUp {
  info: LabInfo;
  measured?: LabMeasurement;
}

/** Where a sockbuf command runs under `lab -- CMD`: sink in the server host, blast in the client host. */
export function placementOf(argv: string[]): HostName | 'root' {
  if (argv[0] === 'sink') return 'server';
  if (argv[0] === 'blast') return 'client';
  return 'root';
}

/**
 * `sockbuf lab -- ARGS`: brings a lab up, runs sockbuf with ARGS under it (output passed through, a
 * parent-death signal: it dies with this process), takes the lab down; resolves to its exit status.
 */
export async function runUnderLab(
  args: string[],
  opts: LabOptions,
  o: { measure?: boolean; onUp?: (up: LabUp) => void; signal?: AbortSignal } = {},
): Promise<number> {
  const lab = await Lab.create(opts);
  try {
    const measured = o.measure === false ? undefined : await lab.measure();
    o.onUp?.({ info: lab.info, measured });
    const where = placementOf(args);
    const cmd = sockbufCommand(args);
    const spec: SpawnSpec =
      where === 'root'
        ? { ...cmd, env: { [LAB_ENV]: JSON.stringify(lab.info) } }
        : netnsCommand(lab.info, where, [cmd.file, ...cmd.args]);
    // stopped (the CLI's SIGINT/SIGTERM): the command gets SIGTERM and the lab is taken down after it
    return await runInherit(spec, { signal: o.signal });
  } finally {
    await lab.close();
  }
}

/** The `lab hold` options that make a holder bring up this lab. */
export function holdArgs(opts: LabOptions, measure = true): string[] {
  const args = [
    '--rtt',
    `${opts.rttMs}ms`,
    '--loss',
    `${(opts.loss ?? 0) * 100}%`,
    '--mtu',
    `${opts.mtu ?? OPTIONS.mtu.default}`,
  ];
  if (opts.congestion) args.push('--congestion', opts.congestion);
  if (opts.bitsPerSecond) args.push('--bandwidth', String(opts.bitsPerSecond));
  if (opts.threads) args.push('--threads', String(opts.threads));
  if (!measure) args.push('--no-measure');
  return args;
}

/** Each stdout line of a child in turn; undefined once it ended. */
function lineReader(child: Child): () => Promise<string | undefined> {
  const queue: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let ended = false;
  const give = (line: string | undefined) => {
    const w = waiting;
    waiting = undefined;
    w?.(line);
  };
  child.onLine((line) => (waiting ? give(line) : queue.push(line)));
  child.exited.then(() => {
    ended = true;
    give(undefined);
  });
  return () => {
    if (queue.length) return Promise.resolve(queue.shift());
    if (ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      waiting = resolve;
    });
  };
}

/** Resolves when `signal` aborts (never without one). */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((r) => signal.addEventListener('abort', () => r(), { once: true }));
}

/**
 * `sockbuf lab up`: a lab that stays up after this process, held by a `sockbuf lab hold` process. When
 * `signal` aborts before the lab is handed over (the CLI's SIGINT or SIGTERM), the holder is told to
 * take down what it made (SIGTERM; SIGKILL 4 s later) and lab up rejects with an EnvironmentError
 * (`interrupted by SIGINT`) once it has: nothing of the lab is left.
 */
export async function upLab(
  opts: LabOptions,
  o: { measure?: boolean; signal?: AbortSignal } = {},
): Promise<LabUp> {
  assertRoot();
  cleanStale();
  const holder = new Child(sockbufCommand(['lab', 'hold', ...holdArgs(opts, o.measure !== false)]), {
    input: 'pipe',
  });
  const next = lineReader(holder);
  const stopped = aborted(o.signal).then(() => 'stopped' as const);
  const interrupted = () =>
    new EnvironmentError(
      `lab up interrupted by ${String(o.signal?.reason ?? 'a signal')}: the lab was taken down`,
    );
  try {
    const first = await Promise.race([next(), stopped]);
    if (first === 'stopped') throw interrupted();
    const r = (first === undefined ? {} : parseBoundedJson(first, { maxLength: MAX_STATE_BYTES })) as {
      error?: string;
      code?: string;
      info?: LabInfo;
      measured?: LabMeasurement;
    };
    if (!r.info) {
      const why = r.error ?? `lab up failed (the lab process ${holder.describeExit()})`;
      throw r.code === 'ERR_SOCKBUF_USAGE' ? new UsageError(why) : new EnvironmentError(why);
    }
    holder.process.stdin?.write('ok\n');
    const second = await Promise.race([next(), stopped]);
    // held, but the signal came before lab up could say so: the lab goes too
    if (second === 'stopped' || o.signal?.aborted) throw interrupted();
    if (second !== 'held')
      throw new EnvironmentError(
        `lab up failed: the lab process ${holder.describeExit()} before it held the lab`,
      );
    holder.release();
    return { info: r.info, measured: r.measured };
  } catch (err) {
    // SIGTERM: the holder takes its lab down (namespaces, devices, state file) and exits
    await holder.stop(4);
    throw err;
  }
}

/** The first line of a stream, or undefined when it ends first. */
function firstLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    let buf = '';
    input.setEncoding('utf8');
    input.on('data', (d: string) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    input.once('end', () => resolve(undefined));
    input.once('error', () => resolve(undefined));
  });
}

/**
 * The holder's side (`sockbuf lab hold`): makes the lab, prints it, completes the hand-shake, then
 * holds the lab until `signal` aborts (the CLI aborts it on SIGINT or SIGTERM: lab down sends
 * SIGTERM) and takes it down. Started by hand (stdin not a pipe from lab up), it holds with its
 * parent-death signal kept.
 */
export async function holdLab(
  opts: LabOptions,
  o: {
    measure?: boolean;
    input?: NodeJS.ReadableStream;
    output?: NodeJS.WritableStream;
    signal: AbortSignal;
  },
): Promise<void> {
  const input = o.input ?? process.stdin;
  const output = o.output ?? process.stdout;
  let lab: Lab | undefined;
  try {
    lab = await Lab.create({ ...opts, held: true });
    // stopped during set-up (lab up interrupted): take down what was made, skip the self-check
    if (o.signal.aborted) return await lab.close();
    const measuring = o.measure === false ? undefined : lab.measure();
    measuring?.catch(() => {});
    const measured = await Promise.race([measuring, aborted(o.signal).then(() => undefined)]);
    if (o.signal.aborted) return await lab.close();
    output.write(`${JSON.stringify({ info: lab.info, measured })}\n`);
  } catch (err) {
    // a failed self-check takes down what it made (namespaces, devices, the delay line) before lab
    // up hears of it: lab up then stops this process, which would leave them to the next cleanStale
    await lab?.close();
    const e = err as Error & { code?: unknown };
    output.write(`${JSON.stringify({ error: e.message, code: e.code })}\n`);
    throw err;
  }
  if ((await Promise.race([firstLine(input), aborted(o.signal).then(() => undefined)])) === 'ok') {
    clearParentDeathSignal();
    output.write('held\n');
  }
  input.pause();
  // lab up closes its ends of the pipes once it has the answer: a late write must not end the holder
  output.on('error', () => {});
  process.stderr.on('error', () => {});
  // held until asked (the delay line's threads keep the process up meanwhile)
  if (!o.signal.aborted) await new Promise((r) => o.signal.addEventListener('abort', r, { once: true }));
  await lab.close();
}

/** A lab's id as `lab status` shows it (the number in its namespaces' names); anything else: UsageError. */
function checkLabId(id: string | undefined): void {
  if (id !== undefined && !/^\d{1,10}$/.test(id))
    throw UsageError.invalid('id', id, 'a lab id as lab status shows it, e.g. 4242');
}

/**
 * `sockbuf lab exec HOST -- ARGV`: runs ARGV in a host of the lab that is up; its exit status. When
 * `signal` aborts, ARGV gets the signal (SIGINT or SIGTERM) and is waited for, so that it prints its
 * summary (the CLI bounds the wait at 5 s).
 */
export async function execInLab(
  host: HostName,
  argv: string[],
  o: { id?: string; signal?: AbortSignal } = {},
): Promise<number> {
  checkLabId(o.id);
  assertRoot();
  cleanStale();
  const live = heldLabs();
  const chosen = o.id ? live.filter((l) => l.id === o.id) : live;
  if (!chosen.length)
    throw new EnvironmentError(o.id ? `no live lab with id ${o.id}` : 'no lab is up (sockbuf lab up)');
  if (chosen.length > 1)
    throw new UsageError(`several labs are up (${chosen.map((l) => l.id).join(', ')}): choose one with --id`);
  return runInherit(netnsCommand(chosen[0].info as LabInfo, host, argv), { signal: o.signal });
}

/**
 * Which of the labs made by lab up `lab down` takes: the one `id` names, every one (`all`), or the
 * only one up. Several up and neither given: a UsageError that lists them (the labs of other users on
 * a shared host are never taken by a plain `lab down`). @internal (exported for its test)
 */
export function chooseLabsToDown(held: LabListing[], o: { id?: string; all?: boolean } = {}): LabListing[] {
  if (o.id !== undefined && o.all) throw UsageError.either('id', 'all');
  if (o.id !== undefined) return held.filter((l) => l.id === o.id);
  if (o.all || held.length <= 1) return held;
  const list = held
    .map((l) => `${l.id}${l.info ? ` (rtt ${formatDuration(l.info.rttMs / 1000)})` : ''}`)
    .join(', ');
  throw new UsageError(
    (name) =>
      `several labs are up: ${list}; choose one with ${name('id')} (e.g. ${name('id')} ${held[0].id}), or take every one down with ${name('all')}`,
    ['id', 'all'],
  );
}

/**
 * `sockbuf lab down`: removes what dead processes left behind, then (unless `stale`) the lab made by
 * lab up that `id` names, every one (`all`), or the only one up (several up and neither given: a
 * UsageError listing them, nothing removed) — SIGTERM to each holder, waiting up to 5 s until its lab
 * is gone. The ids removed; an `id` that is not a lab id is a UsageError, one that names no lab an
 * EnvironmentError; a live lab that another process made for itself is left alone (nothing removed).
 */
export async function downLabs(o: { id?: string; all?: boolean; stale?: boolean } = {}): Promise<string[]> {
  checkLabId(o.id);
  if (o.stale && (o.id !== undefined || o.all))
    throw UsageError.conflict('stale', o.all ? 'all' : 'id', '--stale removes only what dead processes left');
  // only labs made by lab up: a lab another process made for itself (a test, lab -- CMD) is its own
  const chosen = chooseLabsToDown(
    heldLabs().filter((l) => l.pid !== process.pid),
    o,
  );
  assertRoot();
  const removed = cleanStale();
  if (o.stale) return removed;
  const holders = chosen.filter((l) => alive(l.pid));
  for (const l of holders) process.kill(l.pid, 'SIGTERM');
  const until = Date.now() + 5000;
  while (Date.now() < until && listLabs().some((l) => holders.some((h) => h.pid === l.pid))) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const ids = [...removed, ...holders.map((h) => h.id)];
  // a live lab that lab up did not make is its maker's to remove: nothing to do, not an error
  const exists = (id: string) => listLabs().some((l) => l.id === id);
  if (o.id && !ids.includes(o.id) && !exists(o.id)) throw new EnvironmentError(`no lab with id ${o.id}`);
  return ids;
}
