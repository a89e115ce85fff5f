// Reading sysctls from /proc/sys. Lives here, at the bottom, because the buffer policy needs
// rmem_max/wmem_max and src/observe re-exports it. The /proc root can be pointed elsewhere (tests, or
// SOCKBUF_PROC_ROOT) so that rules can be checked against a fake host.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputLimitError, readBoundedText } from './bounded-read.js';

/** The sysctls that decide socket buffers (seed 003's host check): what doctor judges and results documents carry. */
export const BUFFER_SYSCTLS = [
  'net.core.rmem_max',
  'net.core.wmem_max',
  'net.core.rmem_default',
  'net.core.wmem_default',
  'net.core.netdev_max_backlog',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
  'net.ipv4.tcp_moderate_rcvbuf',
  'net.ipv4.tcp_window_scaling',
  'net.ipv4.udp_mem',
] as const;

export function procRoot(root?: string): string {
  return root ?? process.env.SOCKBUF_PROC_ROOT ?? '/proc';
}

/**
 * The most a sysctl's text may hold: 4 KiB. The kernel prints each of BUFFER_SYSCTLS in a few dozen
 * bytes; a proc root that is not the kernel's (a FIFO, /dev/zero linked in) is read no further.
 */
export const MAX_SYSCTL_BYTES = 4096;

/** A sysctl read: its text, or why there is none (`missing`: no such file; `problem`: it could not be read). */
export type SysctlText = { text: string } | { missing: true } | { problem: string };

/** Reads a sysctl, bounded (MAX_SYSCTL_BYTES); says why when it cannot (absent, EACCES, too long). */
export function readSysctlFile(name: string, root?: string): SysctlText {
  const file = join(procRoot(root), 'sys', ...name.split('.'));
  try {
    return { text: readBoundedText(file, MAX_SYSCTL_BYTES, file).trim() };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return { missing: true };
    return { problem: err instanceof InputLimitError ? err.message : `${file}: ${e.code ?? e.message}` };
  }
}

/** A sysctl as text (`net.core.rmem_max` → /proc/sys/net/core/rmem_max), or undefined if it cannot be read. */
export function readSysctlText(name: string, root?: string): string | undefined {
  const r = readSysctlFile(name, root);
  return 'text' in r ? r.text : undefined;
}

/** Whole numbers a double holds exactly, at most 16 of them, from a sysctl's text; else undefined. */
export function sysctlNumbers(t: string): number[] | undefined {
  const fields = t.split(/\s+/);
  if (fields.length > 16 || !fields.every((f) => /^-?\d{1,16}$/.test(f))) return undefined;
  const values = fields.map(Number);
  return values.every(Number.isSafeInteger) ? values : undefined;
}

/**
 * A sysctl as numbers: one for rmem_max, three for tcp_rmem. Undefined when absent, or when its text
 * is not whole numbers a double holds exactly (a proc root that is not the kernel's: garbage, 1e305).
 */
export function readSysctl(name: string, root?: string): number[] | undefined {
  const t = readSysctlText(name, root);
  return t === undefined ? undefined : sysctlNumbers(t);
}

/** Writes a sysctl (`net.core.rmem_max`) through /proc/sys. Throws the fs error (EACCES, EINVAL …). */
export function writeSysctl(name: string, value: string | number, root?: string): void {
  writeFileSync(join(procRoot(root), 'sys', ...name.split('.')), `${value}\n`);
}
