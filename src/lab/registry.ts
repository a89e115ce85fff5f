// Which labs exist on this host, for any process to find: a lab's namespaces are named after the
// process that owns it (sbl-<pid>-c, sbl-<pid>-s), its description is in /run/sockbuf/lab-<pid>.json
// and, for the processes it runs, in SOCKBUF_LAB. A lab whose owner is dead is stale (lab.ts's
// cleanStale removes it); what a live process owns is never touched.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EnvironmentError, UsageError } from '../errors.js';
import { parseBoundedJson, readBoundedJsonFile } from '../policy/json.js';
import { alive } from '../sys/process.js';

export const LAB_PREFIX = 'sbl-';
export const LAB_ENV = 'SOCKBUF_LAB';
export const STATE_DIR = '/run/sockbuf';
export const NETNS_DIR = '/run/netns';
/** A lab's state file, its description in SOCKBUF_LAB and a probe's output are small: 1 MiB at most. */
export const MAX_STATE_BYTES = 1 << 20;

/** The two ends of a lab: the server namespace and the client namespace. */
export type HostName = 'client' | 'server';

export interface LabHost {
  netns: string;
  dev: string;
  ipv4: string;
  ipv6: string;
}

/** What describes a lab to other processes (the SOCKBUF_LAB variable and the state file). */
export interface LabInfo {
  id: string;
  pid: number;
  rttMs: number;
  bitsPerSecond: number;
  loss: number;
  mtu: number;
  mode: string;
  hosts: Record<HostName, LabHost>;
  /** The TCP congestion control across the lab (absent in labs made before it was recorded). */
  congestion?: string;
  /** 'lab': set on the lab's routes; 'host': the kernel's default, left alone. */
  congestionFrom?: 'lab' | 'host';
  held?: boolean;
}

export function stateFile(pid: number): string {
  return join(STATE_DIR, `lab-${pid}.json`);
}

/** The labs held up on this host (`sockbuf lab ls`). */
export interface LabListing {
  id: string;
  pid: number;
  alive: boolean;
  netns: string[];
  info?: LabInfo;
}

/** Every lab on this host: namespaces named sbl-<pid>-* and state files, grouped by PID. */
export function listLabs(): LabListing[] {
  const byPid = new Map<number, LabListing>();
  const get = (pid: number) => {
    let l = byPid.get(pid);
    if (!l) {
      l = { id: String(pid), pid, alive: alive(pid), netns: [] };
      byPid.set(pid, l);
    }
    return l;
  };
  const names = existsSync(NETNS_DIR) ? readdirSync(NETNS_DIR) : [];
  for (const n of names) {
    const m = /^sbl-(\d+)-[cs]$/.exec(n);
    if (m) get(Number(m[1])).netns.push(n);
  }
  const files = existsSync(STATE_DIR) ? readdirSync(STATE_DIR) : [];
  for (const f of files) {
    const m = /^lab-(\d+)\.json$/.exec(f);
    if (!m) continue;
    const l = get(Number(m[1]));
    try {
      l.info = readBoundedJsonFile(join(STATE_DIR, f), { maxBytes: MAX_STATE_BYTES }) as LabInfo;
    } catch {
      // half-written by a killed process: still stale
    }
  }
  return [...byPid.values()].sort((a, b) => a.pid - b.pid);
}

/** Labs made by `sockbuf lab up` whose holder is alive (not the labs other processes made for themselves). */
export function heldLabs(): LabListing[] {
  return listLabs().filter((l) => l.alive && l.info?.held);
}

/** The lab to run in: the one this process runs under (SOCKBUF_LAB), else the one `lab up` made. */
export function currentLab(env: NodeJS.ProcessEnv = process.env): LabInfo | undefined {
  const fromEnv = labFromEnv(env);
  if (fromEnv) return fromEnv;
  const live = heldLabs();
  if (live.length > 1) {
    throw new EnvironmentError(
      `several labs are up (${live.map((l) => l.id).join(', ')}): run under one with sockbuf lab exec, or take the others down`,
    );
  }
  return live[0]?.info;
}

/** The lab this process runs under (SOCKBUF_LAB), if any. */
export function labFromEnv(env: NodeJS.ProcessEnv = process.env): LabInfo | undefined {
  const v = env[LAB_ENV];
  if (!v) return undefined;
  let info: unknown;
  try {
    info = parseBoundedJson(v, { maxLength: MAX_STATE_BYTES });
  } catch (err) {
    throw new UsageError(`${LAB_ENV} is not a lab's description: ${(err as Error).message}`);
  }
  const hosts = (info as Partial<LabInfo> | null)?.hosts;
  if (
    typeof hosts !== 'object' ||
    hosts === null ||
    typeof hosts.client !== 'object' ||
    typeof hosts.server !== 'object'
  )
    throw new UsageError(`${LAB_ENV} is not a lab's description (no client and server hosts)`);
  return info as LabInfo;
}
