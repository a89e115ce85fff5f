// Where the two ends of a run execute. A placement turns an end's command into the process actually
// spawned (a wrapper such as `taskset` or `ip netns exec`, plus environment) and says which address
// `{host}` stands for. The runner's core never knows which placement it has.
//
// A placement kind is one entry of PLACEMENTS (its options, and how it is made from them): a new one is
// one more entry; nothing else changes.
import { readFileSync } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { Lab } from '../lab/lab.js';
import { describeLab, type LabMeasurement } from '../lab/measure.js';
import { netnsArgv } from '../lab/netns.js';
import { currentLab, LAB_ENV, type LabInfo } from '../lab/registry.js';
import { parseLabShorthand } from '../lab/spec.js';
import { REMOTE_PLACEMENT } from '../serve/remote-placement.js';
import { type SpawnSpec, which } from '../sys/process.js';
import type { OptionSpec } from './options.js';

export type { SpawnSpec } from '../sys/process.js';
export { which };

export type Role = 'receiver' | 'sender';

export interface Placement {
  readonly name: string;
  /** The address the receiver listens on and the sender connects to (`{host}` in the ends' argv). */
  readonly host: string;
  /** The process that runs one end. */
  command(role: Role, spec: SpawnSpec): SpawnSpec;
  /** What the results document records about the placement (`params.placement`). */
  describe(): Record<string, unknown>;
  /** Releases what the placement brought up for this bench (a lab made by --lab). */
  close?(): Promise<void>;
}

export const PLACEMENT_NAMES = ['local', 'lab', 'remote'] as const;
export type PlacementName = (typeof PLACEMENT_NAMES)[number];

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
  options?: OptionSpec[];
  create: (opts: Record<string, unknown>) => Placement | Promise<Placement>;
}

/**
 * Across a lab (src/lab): the receiver in the server namespace, the sender in the client namespace,
 * `{host}` the server's lab address. Each end learns the lab from SOCKBUF_LAB.
 */
export function labPlacement(
  info: LabInfo,
  measured?: LabMeasurement,
  close?: () => Promise<void>,
): Placement {
  return {
    name: 'lab',
    host: info.hosts.server.ipv4,
    command(role, spec) {
      const [file, ...args] = netnsArgv(
        info,
        role === 'receiver' ? 'server' : 'client',
        spec.file,
        spec.args,
      );
      return { file, args, env: { ...spec.env, [LAB_ENV]: JSON.stringify(info) } };
    },
    describe: () => ({
      name: 'lab',
      rttUs: Math.round(info.rttMs * 1000),
      bitsPerSecond: info.bitsPerSecond || null,
      lossPct: info.loss * 100,
      mtu: info.mtu,
      mode: info.mode,
      congestion: info.congestion ?? null,
      measured: measured ?? null,
    }),
    close,
  };
}

/**
 * `--lab rtt=2ms,bandwidth=5gbit` brings a lab up for this bench (it measures itself and says so on
 * stderr; close() takes it down). Without it: the lab this process runs under (`sockbuf lab -- bench
 * …`) or the one `sockbuf lab up` made.
 */
const LAB: PlacementKind = {
  options: [
    {
      flags: '--lab <spec>',
      description:
        'run across a lab made for this bench, e.g. rtt=2ms,bandwidth=5gbit (implies --placement lab)',
    },
  ],
  async create(opts) {
    if (opts.lab !== undefined) {
      const lab = await Lab.create(parseLabShorthand(String(opts.lab)));
      try {
        const measured = await lab.measure();
        process.stderr.write(`${describeLab(lab.info, measured)}\n`);
        return labPlacement(lab.info, measured, () => lab.close());
      } catch (err) {
        await lab.close();
        throw err;
      }
    }
    const info = currentLab();
    if (!info) {
      throw new EnvironmentError(
        '--placement lab: no lab is up (sockbuf lab up, sockbuf lab --rtt 2ms -- bench …, or bench … --lab rtt=2ms)',
      );
    }
    return labPlacement(info);
  },
};

/** Every placement. `remote` is filled in by its issue. */
export const PLACEMENTS: Record<PlacementName, PlacementKind> = {
  local: { create: () => localPlacement() },
  lab: LAB,
  remote: REMOTE_PLACEMENT,
};

/** Every placement's own options (each bench command has them). */
export function placementOptions(): OptionSpec[] {
  return Object.values(PLACEMENTS).flatMap((kind) => kind.options ?? []);
}

/** The named placement, ready to use; EnvironmentError (exit 3) when it cannot be had here. */
export async function resolvePlacement(
  name: PlacementName,
  opts: Record<string, unknown> = {},
): Promise<Placement> {
  return PLACEMENTS[name].create(opts);
}
