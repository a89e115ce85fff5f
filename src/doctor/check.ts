// The doctor as one call: read the host, compare its drop counters with the last run's (or with a
// sample window), judge everything against the targets, and keep this run's counters for the next.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { procRoot as resolveRoot } from '../observe/proc.js';
import { checkOption } from '../policy/option-registry.js';
import {
  type CounterBaseline,
  type CounterSnapshot,
  compareCounters,
  historyPath,
  loadHistory,
  saveHistory,
} from './history.js';
import { readHostValues } from './host.js';
import { type DoctorTargets, diagnose, dropCounters, type Finding, type HostValues } from './rules.js';

export interface CheckHostOptions {
  targets: DoctorTargets;
  /** The /proc tree to read (default $SOCKBUF_PROC_ROOT or /proc). */
  procRoot?: string;
  /** Measure the drop counters over this window instead of since the last run: ms, or '5s'. */
  sample?: number | string;
  /** false: no history (counters since boot); a path: that history file. Default: one per proc root. */
  history?: boolean | string;
}

export interface HostCheck {
  procRoot: string;
  host: HostValues;
  findings: Finding[];
  baseline: CounterBaseline;
  /** The history file read and written, when one was used. */
  historyPath?: string;
  /** Things the user should know that are not findings (an unwritable history, say). */
  warnings: string[];
}

function snapshot(root: string, h: HostValues): CounterSnapshot {
  let bootId: string | undefined;
  try {
    bootId = readFileSync(join(root, 'sys', 'kernel', 'random', 'boot_id'), 'utf8').trim();
  } catch {
    bootId = undefined;
  }
  return { time: Date.now(), counters: dropCounters(h), ...(bootId ? { bootId } : {}) };
}

/** Checks the host against the targets. Throws UsageError (naming procRoot) when it is not a /proc tree. */
export async function checkHost(o: CheckHostOptions): Promise<HostCheck> {
  const root = resolveRoot(o.procRoot);
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  if (!isDir(join(root, 'sys')) || !isDir(join(root, 'net')))
    throw UsageError.invalid('procRoot', root, 'a /proc tree: a folder with sys/ and net/ in it');
  const warnings: string[] = [];
  let host = readHostValues(root);
  let now = snapshot(root, host);
  let baseline: CounterBaseline;
  if (o.sample !== undefined) {
    const ms = checkOption('sample', o.sample);
    const before = now;
    await sleep(ms);
    host = readHostValues(root);
    now = snapshot(root, host);
    baseline = compareCounters(now, before, 'sample');
  }
  const path =
    o.history === false ? undefined : typeof o.history === 'string' ? o.history : historyPath(root);
  const last = path ? loadHistory(path) : undefined;
  baseline ??= compareCounters(now, last);
  if (path) {
    const failed = saveHistory(path, now);
    if (failed) warnings.push(failed);
  }
  if (baseline.note) warnings.push(baseline.note);
  host = { ...host, baseline };
  return {
    procRoot: root,
    host,
    findings: diagnose(host, o.targets),
    baseline,
    ...(path ? { historyPath: path } : {}),
    warnings,
  };
}
