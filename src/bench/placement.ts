// Where the two ends of a run execute. A placement turns an end's command into the process actually
// spawned (a wrapper such as `taskset` or `ip netns exec`, plus environment) and says which address
// `{host}` stands for. The runner's core never knows which placement it has.
//
// To fill in a placement (lab, remote), replace its entry in PLACEMENTS; nothing else changes.
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Command } from 'commander';
import { EnvironmentError } from '../policy/units.js';
import { REMOTE_PLACEMENT } from '../serve/placement.js';

export type Role = 'receiver' | 'sender';

/** A process to spawn: what the runner passes to child_process.spawn. */
export interface SpawnSpec {
  file: string;
  args: string[];
  /** Added to (not replacing) the runner's environment. */
  env?: Record<string, string>;
}

export interface Placement {
  readonly name: string;
  /** The address the receiver listens on and the sender connects to (`{host}` in the ends' argv). */
  readonly host: string;
  /** The process that runs one end. */
  command(role: Role, spec: SpawnSpec): SpawnSpec;
  /** What the results document records about the placement (`params.placement`). */
  describe(): Record<string, unknown>;
}

export const PLACEMENT_NAMES = ['local', 'lab', 'remote'] as const;
export type PlacementName = (typeof PLACEMENT_NAMES)[number];

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

/** `0-3,6,8-9` (Cpus_allowed_list) → [0,1,2,3,6,8,9]. Pure. */
export function parseCpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

/** The CPUs this process may run on (its affinity mask). */
export function allowedCpus(): number[] {
  try {
    const m = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return parseCpuList(m[1]);
  } catch {
    // fall through
  }
  return [0];
}

/**
 * Both ends here, on loopback. With two or more allowed CPUs and `taskset` (util-linux) on PATH, the
 * receiver is pinned to the first allowed CPU and the sender to the second, so the two processes
 * never share a core; otherwise they run unpinned and `describe()` says why.
 */
export function localPlacement(
  cpus = allowedCpus(),
  taskset: string | null = which('taskset') ?? null,
): Placement {
  const pin = cpus.length >= 2 && taskset !== null;
  const cpuOf: Record<Role, number> = { receiver: cpus[0], sender: cpus[1] };
  const reason = !pin ? (cpus.length < 2 ? 'one CPU' : 'taskset not found') : undefined;
  return {
    name: 'local',
    host: '127.0.0.1',
    command(role, spec) {
      if (!pin || taskset === null) return spec;
      return { ...spec, file: taskset, args: ['-c', String(cpuOf[role]), spec.file, ...spec.args] };
    },
    describe: () => (pin ? { name: 'local', cpus: cpuOf } : { name: 'local', cpus: null, unpinned: reason }),
  };
}

/**
 * A kind of placement: the options it needs on every bench command (say `--server HOST:PORT`), and
 * how it is made from the parsed options. Throw EnvironmentError (exit 3) when it cannot be had here,
 * UsageError (exit 2) for a bad option.
 */
export interface PlacementKind {
  options?: (cmd: Command) => void;
  create: (opts: Record<string, unknown>) => Placement | Promise<Placement>;
}

function notYet(name: string, issue: string): PlacementKind {
  return {
    create: () => {
      throw new EnvironmentError(
        `--placement ${name} is not available yet (${issue}); use --placement local`,
      );
    },
  };
}

/**
 * Every placement. `lab` and `remote` are filled in by their issues: replace the entry, e.g.
 * `lab: { options: (cmd) => cmd.option('--lab <name>', …), create: (o) => labPlacement(o.lab) }`,
 * where labPlacement's command() wraps the receiver in `ip netns exec SERVER-NS` and the sender in
 * `ip netns exec CLIENT-NS`, and its host is the server namespace's address.
 */
export const PLACEMENTS: Record<PlacementName, PlacementKind> = {
  local: { create: () => localPlacement() },
  lab: notYet('lab', 'it needs the lab: `sockbuf lab up`, from the lab issue'),
  remote: REMOTE_PLACEMENT,
};

/** Adds every placement's own options to a bench command. */
export function addPlacementOptions(cmd: Command): Command {
  for (const kind of Object.values(PLACEMENTS)) kind.options?.(cmd);
  return cmd;
}

/** The named placement, ready to use; EnvironmentError (exit 3) when it cannot be had here. */
export async function resolvePlacement(
  name: PlacementName,
  opts: Record<string, unknown> = {},
): Promise<Placement> {
  return PLACEMENTS[name].create(opts);
}
