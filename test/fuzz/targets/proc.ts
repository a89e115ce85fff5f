// Fuzz targets: the files sockbuf reads from a /proc tree (src/observe/proc.ts, src/doctor/host.ts):
// /proc/net/snmp, snmp6, softnet_stat, sockstat, and whole fake trees for `doctor --proc-root`
// (sysctl files, counters, mountinfo, boot_id with garbage, huge numbers and control characters).
// Properties: every counter read is a finite number, and doctor's text carries no control character.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { formatFindings } from '../../../src/doctor/diagnose.js';
import { readHostValues } from '../../../src/doctor/host.js';
import { diagnose, SYSCTLS } from '../../../src/doctor/rules.js';
import {
  parseSnmp,
  parseSnmp6,
  parseSockstat,
  parseSoftnet,
  parseSoftnetDrops,
  readBufferSysctls,
} from '../../../src/observe/proc.js';
import type { Target } from '../harness.js';
import { mutateString, type Rng } from '../prng.js';

const SNMP =
  'Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\nUdp: 1000 2 30 999 28 0 0 0 0\n';
const SNMP6 = 'Udp6InDatagrams                 \t12\nUdp6RcvbufErrors                \t3\n';
const SOFTNET =
  '0000abcd 00000002 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n';
const SOCKSTAT = 'sockets: used 42\nTCP: inuse 3 orphan 0 tw 13 alloc 4 mem 413\nUDP: inuse 2 mem 8\n';
const NASTY = [
  '\u001b]0;pwned\u0007',
  '\u001b[2J',
  '\r',
  '\n',
  '\u202e',
  '9'.repeat(400),
  '-1',
  'NaN',
  '1e999',
  '0x10',
  ' ',
  '\t',
  '\0',
  '__proto__',
];

const text = (rng: Rng, valid: string) =>
  rng.chance(0.1) ? rng.bytes(rng.length(300)).toString('latin1') : mutateString(rng, valid, NASTY);

const finiteCounters = (o: Record<string, Record<string, number>>) => {
  for (const [proto, kv] of Object.entries(o))
    for (const [k, v] of Object.entries(kv)) assert.ok(Number.isFinite(v) && v >= 0, `${proto}.${k} = ${v}`);
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/;

/** A fake /proc tree: file → content. */
type Tree = Record<string, string>;

const SYSCTL_VALUES: Record<string, string> = {
  'net.core.rmem_max': '212992',
  'net.ipv4.tcp_rmem': '4096\t131072\t6291456',
  'net.ipv4.udp_mem': '187083\t249446\t374166',
};

export const procTargets: Target[] = [
  {
    name: 'proc.parseSnmp',
    generate: (rng: Rng) => text(rng, SNMP),
    run: (t: string) => parseSnmp(t),
    allowed: () => false,
    check: (_t, out) => finiteCounters(out as Record<string, Record<string, number>>),
  } as Target<string> as Target,
  {
    name: 'proc.parseSnmp6',
    generate: (rng: Rng) => text(rng, SNMP6),
    run: (t: string) => parseSnmp6(t),
    allowed: () => false,
    check: (_t, out) => finiteCounters(out as Record<string, Record<string, number>>),
  } as Target<string> as Target,
  {
    name: 'proc.parseSockstat',
    generate: (rng: Rng) => text(rng, SOCKSTAT),
    run: (t: string) => parseSockstat(t),
    allowed: () => false,
    check: (_t, out) => finiteCounters(out as Record<string, Record<string, number>>),
  } as Target<string> as Target,
  {
    name: 'proc.parseSoftnet',
    generate: (rng: Rng) => text(rng, SOFTNET.repeat(rng.range(1, 3))),
    run: (t: string) => ({ rows: parseSoftnet(t), drops: parseSoftnetDrops(t) }),
    allowed: () => false,
    check: (_t, out) => {
      const { rows, drops } = out as { rows: ReturnType<typeof parseSoftnet>; drops: number };
      assert.ok(Number.isFinite(drops) && drops >= 0, `drops ${drops}`);
      for (const r of rows)
        for (const [k, v] of Object.entries(r)) assert.ok(Number.isFinite(v) && v >= 0, `${k} ${v}`);
    },
  } as Target<string> as Target,
  {
    name: 'proc.doctorTree',
    generate: (rng: Rng): Tree => {
      const tree: Tree = {};
      for (const n of SYSCTLS)
        if (rng.chance(0.8))
          tree[join('sys', ...n.split('.'))] = rng.chance(0.5)
            ? (SYSCTL_VALUES[n] ?? '4194304')
            : text(rng, SYSCTL_VALUES[n] ?? '4194304');
      tree['net/snmp'] = text(rng, SNMP);
      tree['net/softnet_stat'] = text(rng, SOFTNET);
      if (rng.chance(0.5)) tree['self/mountinfo'] = text(rng, '22 1 0:5 / /proc rw,nosuid - proc proc rw\n');
      if (rng.chance(0.5))
        tree['sys/kernel/random/boot_id'] = text(rng, '0f5c5a2e-7b1c-4b7e-9d4a-5c2b8d2f0e11');
      return tree;
    },
    run: (tree: Tree) => {
      const root = mkdtempSync(join(tmpdir(), 'sockbuf-fuzz-proc-'));
      try {
        mkdirSync(join(root, 'sys'), { recursive: true });
        mkdirSync(join(root, 'net'), { recursive: true });
        for (const [f, content] of Object.entries(tree)) {
          mkdirSync(dirname(join(root, f)), { recursive: true });
          writeFileSync(join(root, f), content);
        }
        const host = readHostValues(root);
        const targets = { bitsPerSecond: 1e10, rttSeconds: 0.002, udpRcvbufBytes: 8 << 20 };
        const findings = diagnose(host, targets);
        return {
          host,
          findings,
          text: formatFindings(findings, targets, host.procSysReadOnly),
          sysctls: readBufferSysctls(root),
        };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    allowed: () => false,
    check: (_t, out) => {
      const { host, text: printed } = out as { host: ReturnType<typeof readHostValues>; text: string };
      for (const [n, v] of Object.entries(host.sysctls)) assert.ok(v.every(Number.isFinite), `${n} ${v}`);
      for (const [k, v] of Object.entries(host.udp ?? {}))
        assert.ok(Number.isFinite(v) && v >= 0, `Udp.${k} ${v}`);
      assert.ok(host.softnetDrops === undefined || Number.isFinite(host.softnetDrops));
      assert.ok(
        !CONTROL.test(printed),
        `doctor's text carries a control character: ${JSON.stringify(printed.match(CONTROL))}`,
      );
      assert.doesNotMatch(printed, /NaN|Infinity|undefined/);
    },
    testCount: 300,
  } as Target<Tree> as Target,
];
