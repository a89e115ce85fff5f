// A fake /proc tree for doctor tests: sysctls, /proc/net/snmp, softnet_stat, and a mountinfo.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const GOOD: Record<string, string> = {
  'net.core.rmem_max': '8388608',
  'net.core.wmem_max': '8388608',
  'net.core.rmem_default': '212992',
  'net.core.wmem_default': '212992',
  'net.core.netdev_max_backlog': '1000',
  'net.ipv4.tcp_rmem': '4096\t131072\t33554432',
  'net.ipv4.tcp_wmem': '4096\t16384\t16777216',
  'net.ipv4.tcp_moderate_rcvbuf': '1',
  'net.ipv4.tcp_window_scaling': '1',
  'net.ipv4.udp_mem': '575799\t767732\t1151598',
  'kernel.osrelease': '6.1.0-fake',
};

/** seed 000's stock m7g host, plus drops */
export const STOCK: Record<string, string> = {
  ...GOOD,
  'net.core.rmem_max': '229376',
  'net.core.wmem_max': '229376',
  'net.ipv4.tcp_rmem': '4096 87380 6291456',
  'net.ipv4.tcp_wmem': '4096 20480 4194304',
};

export function fakeProc(
  sysctls: Record<string, string>,
  opts: { rcvbufErrors?: number; softnetDrops?: number; readOnly?: boolean } = {},
): string {
  const root = mkdtempSync(join(tmpdir(), 'sockbuf-proc-'));
  const put = (rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  for (const [k, v] of Object.entries(sysctls)) put(join('sys', ...k.split('.')), `${v}\n`);
  const e = opts.rcvbufErrors ?? 0;
  put(
    'net/snmp',
    'Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n' +
      `Udp: 100 0 ${e} 100 ${e} 0 0 0 0\n`,
  );
  put('net/softnet_stat', `0000abcd ${(opts.softnetDrops ?? 0).toString(16).padStart(8, '0')} 00000000\n`);
  put(
    'self/mountinfo',
    '22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n' +
      (opts.readOnly ? '30 22 0:21 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n' : ''),
  );
  return root;
}
