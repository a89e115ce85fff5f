// Reads what the doctor's rules judge: the buffer sysctls, the UDP and softnet counters, whether
// /proc/sys is writable, and whether the kernel takes UDP_SEGMENT / UDP_GRO. Never writes anything.
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSnmp, procRoot, readNet, softnetDropsOf } from '../observe/proc.js';
import { pageSize } from '../sys/libc.js';
import { probeUdpOffload } from '../sys/mmsg.js';
import { readSysctlFile, sysctlNumbers } from '../sys/sysctl.js';
import { type HostValues, SYSCTLS } from './rules.js';

/**
 * /proc/sys is read-only when the mount holding it says `ro` in <root>/self/mountinfo (how a
 * container mounts it), or when the kernel refuses write access to rmem_max (EROFS); writable (by
 * root) when access(W_OK) succeeds or only this user lacks the right (EACCES, EPERM). Undefined when
 * it cannot tell: rmem_max is not there (ENOENT, ENOTDIR: a garbage or partial proc root).
 */
export function procSysReadOnly(root?: string): boolean | undefined {
  const r = procRoot(root);
  try {
    const mounts = readFileSync(join(r, 'self', 'mountinfo'), 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f.length > 5 && (f[4] === '/proc/sys' || f[4] === '/proc'))
      .sort((a, b) => b[4].length - a[4].length);
    if (mounts[0]?.[5].split(',').includes('ro')) return true;
  } catch {
    // no mountinfo (a fake /proc without one): fall through to the access check
  }
  try {
    accessSync(join(r, 'sys', 'net', 'core', 'rmem_max'), constants.W_OK);
    return false;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return true;
    // this user may not write it, root may: the file is there and the mount is not read-only
    if (code === 'EACCES' || code === 'EPERM') return false;
    return undefined;
  }
}

export function readHostValues(root?: string): HostValues {
  const sysctls: HostValues['sysctls'] = {};
  // what could not be read, by check name, and why: such a check is `unknown`, never `ok`
  const unreadable: Record<string, string> = {};
  for (const n of SYSCTLS) {
    const r = readSysctlFile(n, root);
    if ('problem' in r) unreadable[n] = r.problem;
    else if ('text' in r) {
      const v = sysctlNumbers(r.text);
      if (v) sysctls[n] = v;
      else
        unreadable[n] =
          `not what the kernel prints (whole numbers): ${r.text.length} characters of something else`;
    }
  }
  let udp: HostValues['udp'];
  let udpWhy: string | undefined;
  try {
    udp = parseSnmp(readNet('snmp', root)).Udp;
    if (!udp) udpWhy = `no Udp lines in ${join(procRoot(root), 'net', 'snmp')}`;
  } catch (err) {
    udpWhy = (err as Error).message;
  }
  if (udpWhy) for (const c of ['RcvbufErrors', 'InErrors', 'SndbufErrors']) unreadable[`Udp.${c}`] = udpWhy;
  let softnetDrops: number | undefined;
  try {
    softnetDrops = softnetDropsOf(readNet('softnet_stat', root));
    if (softnetDrops === undefined)
      unreadable['softnet.dropped'] = `no CPU lines in ${join(procRoot(root), 'net', 'softnet_stat')}`;
  } catch (err) {
    unreadable['softnet.dropped'] = (err as Error).message;
  }
  const offload = probeUdpOffload();
  return {
    sysctls,
    udp,
    softnetDrops,
    procSysReadOnly: procSysReadOnly(root),
    udpSegment: offload.segment,
    udpGro: offload.gro,
    pageSize: pageSize(),
    unreadable,
  };
}
