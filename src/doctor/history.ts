// Drop counters now against then, as nstat does: the counters of the doctor's last run are kept in a
// history file (one per /proc root), and a run reports what grew since. Without a usable history
// (first run, a reboot in between, an unwritable location) the baseline is the boot. `--sample`
// measures over a window instead. The arithmetic is pure; the file I/O is the two small functions.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseBoundedJson } from '../policy/json.js';

/** The drop counters one run saw, with the boot they belong to. */
export interface CounterSnapshot {
  /** /proc/sys/kernel/random/boot_id: a different one means the counters started again. */
  bootId?: string;
  /** When they were read (ms since the epoch). */
  time: number;
  counters: Record<string, number>;
}

/** What the counters are compared against. */
export interface CounterBaseline {
  /** boot: since-boot totals; last-run: the previous doctor run; sample: a window just measured. */
  kind: 'boot' | 'last-run' | 'sample';
  /** Seconds between the baseline and now (absent for 'boot'). */
  seconds?: number;
  /** Growth per counter since the baseline. */
  grew: Record<string, number>;
  /** Why the baseline is the boot although a history was asked for (unreadable, unwritable, reboot). */
  note?: string;
}

/** The history file for a /proc root: $SOCKBUF_DOCTOR_HISTORY, else one per root under the user's state folder. */
export function historyPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.SOCKBUF_DOCTOR_HISTORY) return env.SOCKBUF_DOCTOR_HISTORY;
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  const tag = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 12);
  return join(state, 'sockbuf', `doctor-${tag}.json`);
}

/** Growth of each counter from `before` to `now`; the boot when there is no comparable `before`. Pure. */
export function compareCounters(
  now: CounterSnapshot,
  before: CounterSnapshot | undefined,
  kind: 'last-run' | 'sample' = 'last-run',
): CounterBaseline {
  const sameBoot =
    before !== undefined &&
    (before.bootId === undefined || now.bootId === undefined || before.bootId === now.bootId) &&
    Object.entries(before.counters).every(([k, v]) => !(k in now.counters) || now.counters[k] >= v);
  if (!before || !sameBoot)
    return {
      kind: 'boot',
      grew: { ...now.counters },
      ...(before ? { note: 'the host rebooted (or its counters were reset) since the last run' } : {}),
    };
  const grew: Record<string, number> = {};
  for (const [k, v] of Object.entries(now.counters)) grew[k] = v - (before.counters[k] ?? 0);
  return { kind, seconds: Math.max(0, (now.time - before.time) / 1000), grew };
}

/** The last run's snapshot, or undefined when there is none or it cannot be read as one. */
export function loadHistory(path: string): CounterSnapshot | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v = parseBoundedJson(text, { maxLength: 1 << 16, maxDepth: 4 }) as Partial<CounterSnapshot>;
    if (typeof v?.time !== 'number' || typeof v.counters !== 'object' || v.counters === null)
      return undefined;
    const counters: Record<string, number> = {};
    for (const [k, n] of Object.entries(v.counters)) if (Number.isFinite(n)) counters[k] = n as number;
    return { time: v.time, counters, ...(typeof v.bootId === 'string' ? { bootId: v.bootId } : {}) };
  } catch {
    return undefined;
  }
}

/** Writes the snapshot (atomically: a temporary file renamed); returns the reason when it cannot. */
export function saveHistory(path: string, snap: CounterSnapshot): string | undefined {
  try {
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(snap)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
    return undefined;
  } catch (err) {
    return `cannot write the doctor's history ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): drops are counted since boot`;
  }
}
