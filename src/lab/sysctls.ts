// Host sysctl changes made for an experiment (bench sysctl-sweep), always undone: the original values
// are written to a state file before the first change, so that what a killed process changed is
// restored by the next lab or sweep command (restoreStaleSysctls, called by cleanStale).
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError } from '../errors.js';
import { readBoundedJsonFile } from '../policy/json.js';
import { alive } from '../sys/process.js';
import { readSysctlText, writeSysctl } from '../sys/sysctl.js';

const readState = (file: string) => readBoundedJsonFile(file, { maxBytes: 1 << 20 }) as SysctlState;

/** Where the originals are kept (tmpfs: a reboot resets both the sysctls and the state). */
function stateDir(): string {
  return process.env.SOCKBUF_STATE_DIR ?? '/run/sockbuf';
}

export interface SysctlState {
  pid: number;
  /** name → the value before sockbuf changed it. */
  original: Record<string, string>;
}

function stateFile(pid: number): string {
  return join(stateDir(), `sysctl-${pid}.json`);
}

/**
 * Sets each sysctl, having first saved its original value (the first original wins when a name is
 * changed twice). The state file is on disk before any value changes. Refused (EnvironmentError,
 * exit 3) while another live process has a change of one of the same sysctls pending.
 */
export function changeSysctls(values: Record<string, string | number>, pid = process.pid): void {
  // another live process's change of the same sysctl: saving its value as "the original" would make
  // it permanent when this process restores; refuse before anything is written
  for (const other of liveSysctlChanges(pid))
    for (const name of Object.keys(values))
      if (other.original[name] !== undefined)
        throw new EnvironmentError(
          `sysctl ${name} is being changed by process ${other.pid} (its original: ${other.original[name]}); wait until it restores it`,
        );
  const file = stateFile(pid);
  const state: SysctlState = existsSync(file) ? readState(file) : { pid, original: {} };
  for (const name of Object.keys(values)) {
    if (state.original[name] !== undefined) continue;
    const v = readSysctlText(name);
    if (v === undefined) throw new EnvironmentError(`sysctl ${name} does not exist here`);
    state.original[name] = v;
  }
  mkdirSync(stateDir(), { recursive: true });
  writeFileSync(file, `${JSON.stringify(state)}\n`);
  for (const [name, v] of Object.entries(values)) writeSysctl(name, v);
}

/** Puts back what `pid` changed and removes its state file. Returns the names restored. */
export function restoreSysctls(pid = process.pid): string[] {
  const file = stateFile(pid);
  if (!existsSync(file)) return [];
  let state: SysctlState;
  try {
    state = readState(file);
  } catch {
    rmSync(file, { force: true }); // written before any change: a torn file changed nothing
    return [];
  }
  for (const [name, v] of Object.entries(state.original)) writeSysctl(name, v);
  rmSync(file, { force: true });
  return Object.keys(state.original);
}

/** Restores what processes that no longer run changed. Returns `pid: names` for each. */
export function restoreStaleSysctls(): string[] {
  if (!existsSync(stateDir())) return [];
  const done: string[] = [];
  for (const f of readdirSync(stateDir())) {
    const m = /^sysctl-(\d+)\.json$/.exec(f);
    if (!m || alive(Number(m[1]))) continue;
    const names = restoreSysctls(Number(m[1]));
    if (names.length) done.push(`${m[1]}: ${names.join(' ')}`);
  }
  return done;
}

/** The changes pending for `pid` (its saved originals), if any. @internal (exported for its test) */
export function pendingSysctls(pid = process.pid): SysctlState | undefined {
  const file = stateFile(pid);
  return existsSync(file) ? readState(file) : undefined;
}

/**
 * The changes other processes still running have made and not yet restored (their saved originals):
 * a benchmark that changes the same host-global sysctls refuses to start while there is one.
 */
export function liveSysctlChanges(except = process.pid): SysctlState[] {
  if (!existsSync(stateDir())) return [];
  const out: SysctlState[] = [];
  for (const f of readdirSync(stateDir())) {
    const m = /^sysctl-(\d+)\.json$/.exec(f);
    if (!m || Number(m[1]) === except || !alive(Number(m[1]))) continue;
    try {
      out.push(readState(join(stateDir(), f)));
    } catch {
      // torn: written before any change, so it changed nothing
    }
  }
  return out;
}
