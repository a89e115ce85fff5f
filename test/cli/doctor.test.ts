// `sockbuf doctor` as a command against fake /proc trees: the table, --json, --sysctl-conf, exit codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkResults } from '../../src/bench/report/results.js';
import { procSysReadOnly } from '../../src/doctor/host.js';
import { fakeProc, GOOD, STOCK } from '../doctor/fakeproc.js';
import { SOCKBUF_ARGV } from './argv.js';

const good = fakeProc(GOOD);
const stock = fakeProc(STOCK, { rcvbufErrors: 9, readOnly: true });
const scratch = mkdtempSync(join(tmpdir(), 'sockbuf-doctor-history-'));
after(() => {
  for (const d of [good, stock, scratch]) rmSync(d, { recursive: true, force: true });
});

let histories = 0;
/** Each call its own fresh history file unless one is given. */
const doctor = (...args: string[]) => doctorWith(join(scratch, `h${histories++}.json`), ...args);
const doctorWith = (history: string, ...args: string[]) =>
  spawnSync(process.execPath, [...SOCKBUF_ARGV, 'doctor', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SOCKBUF_DOCTOR_HISTORY: history },
  });

/** Rewrites a fake /proc's Udp counters (InErrors and RcvbufErrors both = n). */
function setUdpErrors(root: string, n: number): void {
  writeFileSync(
    join(root, 'net/snmp'),
    'Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n' +
      `Udp: 100 0 ${n} 100 ${n} 0 0 0 0\n`,
  );
}

test('a host that holds the targets (SOCKBUF_PROC_ROOT): the table, exit 0', () => {
  const r = spawnSync(process.execPath, [...SOCKBUF_ARGV, 'doctor'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SOCKBUF_PROC_ROOT: good, SOCKBUF_DOCTOR_HISTORY: join(scratch, 'env.json') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^net\.core\.rmem_max\s+8388608\s+4194304\s+ok$/m);
  assert.match(r.stdout, /All checks hold\./);
});

test('a stock host: findings with what they limit and the value to set, exit 1', () => {
  const r = doctor('--proc-root', stock, '--bandwidth', '10gbit', '--rtt', '2ms');
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, /^! net\.core\.rmem_max: a pinned SO_RCVBUF is clamped to rmem_max = 224 KiB/m);
  assert.match(
    r.stdout,
    /recommended \(on the host: \/proc\/sys is read-only here\): sysctl -w net\.core\.rmem_max=4194304/,
  );
  assert.match(r.stdout, /sysctl -w net\.ipv4\.tcp_wmem="4096 20480 8388608"/);
  assert.match(r.stdout, /^! Udp\.RcvbufErrors: 9 since boot/m);
});

test('--json: one sockbuf.v1 document, each item with value, target, status, explanation', () => {
  const r = doctor('--proc-root', stock, '--json', '--rtt', '10ms');
  assert.equal(r.status, 1, r.stderr);
  const doc = checkResults(JSON.parse(r.stdout));
  assert.equal(doc.command, 'doctor');
  assert.deepEqual(doc.params, {
    bitsPerSecond: 10e9,
    rttSeconds: 0.01,
    udpRcvbufBytes: 8388608,
    procRoot: stock,
  });
  assert.equal(doc.host.kernel, '6.1.0-fake');
  assert.equal(doc.host.sysctls['net.core.rmem_max'], '229376');
  const rmem = doc.results.find((f) => f.name === 'net.core.rmem_max');
  assert.deepEqual(Object.keys(rmem ?? {}).sort(), [
    'explanation',
    'kind',
    'name',
    'recommended',
    'scenario',
    'status',
    'target',
    'value',
  ]);
  assert.equal(rmem?.target, 12_500_000); // 10 Gbit/s × 10 ms
  assert.equal(rmem?.status, 'low');
});

test('--sysctl-conf prints an /etc/sysctl.d file and writes nothing; exit 0 since it printed it', () => {
  const r = doctor('--proc-root', stock, '--sysctl-conf');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^# \/etc\/sysctl\.d\/60-sockbuf\.conf$/m);
  assert.match(r.stdout, /^net\.core\.rmem_max = 4194304$/m);
  assert.match(r.stdout, /^net\.ipv4\.tcp_wmem = 4096 20480 8388608$/m);
  assert.match(r.stdout, /install it on the host/);
  assert.equal(readFileSync(join(stock, 'sys/net/core/rmem_max'), 'utf8'), '229376\n', 'unchanged');
});

test('bad usage exits 2 naming the option', () => {
  for (const [opt, val] of [
    ['--rtt', 'banana'],
    ['--bandwidth', 'fast'],
  ]) {
    const r = doctor(opt, val);
    assert.equal(r.status, 2, `${opt} ${val}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${opt}.*'${val}'`));
    assert.equal(r.stdout, '');
  }
});

test('like nstat: drops since the last run decide the exit status; since-boot totals are information', () => {
  const root = fakeProc(GOOD, { rcvbufErrors: 9 });
  const history = join(scratch, 'nstat.json');
  try {
    const first = doctorWith(history, '--proc-root', root);
    assert.equal(first.status, 1, first.stderr);
    assert.match(first.stdout, /^! Udp\.RcvbufErrors: 9 since boot/m);
    const second = doctorWith(history, '--proc-root', root);
    assert.equal(second.status, 0, second.stdout);
    assert.match(second.stdout, /^Udp\.RcvbufErrors\s+9 \(\+0\)\s+0\s+info$/m);
    assert.match(second.stdout, /Udp\.RcvbufErrors: 0 since the last run .* ago \(9 since boot\)/);
    setUdpErrors(root, 12);
    const third = doctorWith(history, '--proc-root', root, '--json');
    assert.equal(third.status, 1, third.stderr);
    const row = JSON.parse(third.stdout).results.find((f: { name: string }) => f.name === 'Udp.RcvbufErrors');
    assert.equal(row.value, 12);
    assert.equal(row.grew, 3);
    assert.equal(row.since, 'last-run');
    assert.equal(row.status, 'drops');
    setUdpErrors(root, 1); // fewer than before: a reboot; the baseline is the boot again
    const fourth = doctorWith(history, '--proc-root', root);
    assert.equal(fourth.status, 1);
    assert.match(fourth.stderr, /rebooted/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('--sample counts drops over a window; an unwritable history is said and the boot is the baseline', () => {
  const root = fakeProc(GOOD, { rcvbufErrors: 9 });
  try {
    const r = doctor('--proc-root', root, '--sample', '200ms');
    assert.equal(r.status, 0, r.stdout);
    assert.match(r.stdout, /Udp\.RcvbufErrors: 0 during the \d+ ms sample \(9 since boot\)/);
    const notADir = join(scratch, 'a-file');
    writeFileSync(notADir, '');
    const bad = doctorWith(join(notADir, 'history.json'), '--proc-root', root);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /cannot write the doctor's history .*since boot/);
    assert.equal(doctor('--sample', '0s').status, 2);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('udp_mem is shown in pages and bytes', () => {
  const r = doctor('--proc-root', good);
  assert.match(
    r.stdout,
    /^net\.ipv4\.udp_mem\s+575799 767732 1151598 pages = [\d.]+ GiB [\d.]+ GiB [\d.]+ GiB\s+max ≥ \d+ pages = 8 MiB\s+ok$/m,
  );
});

// bad input names the option (issue 23's sweep: the message named no option, exit 3)
test('a --proc-root that is not a /proc tree is bad usage naming the option and the value (exit 2)', () => {
  const r = doctor('--proc-root', '/nonexistent');
  assert.equal(r.status, 2, r.stdout);
  assert.match(r.stderr, /^sockbuf: invalid value for --proc-root: '\/nonexistent' \(expected a \/proc tree/);
  assert.equal(r.stdout, '');
});

// issue 44 item 4: before, every check that could not be read counted as `missing` and the summary
// said "All checks hold." with exit 0.
test('a garbage proc root: each check it could not read is unknown, the summary says so, exit 3', () => {
  const root = fakeProc({ ...GOOD, 'net.core.rmem_max': 'abc', 'net.ipv4.tcp_rmem': '1 2' });
  try {
    // the rest garbage too: a sysctl that never ends (reading stops at 4 KiB), counters that are text
    for (const n of Object.keys(GOOD).filter((n) => n !== 'net.core.rmem_max' && n !== 'net.ipv4.tcp_rmem'))
      writeFileSync(join(root, 'sys', ...n.split('.')), 'x'.repeat(10_000));
    writeFileSync(join(root, 'net/snmp'), 'garbage\n');
    writeFileSync(join(root, 'net/softnet_stat'), 'zz zz zz\n');
    const r = doctor('--proc-root', root);
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stdout, /^net\.core\.rmem_max\s+-\s+-\s+unknown$/m);
    assert.match(
      r.stdout,
      /^\? net\.core\.rmem_max: could not be read: not what the kernel prints \(whole numbers\): 3 characters of something else$/m,
    );
    assert.match(r.stdout, /^\? net\.ipv4\.tcp_rmem: could not be read: three numbers expected, read 2$/m);
    assert.match(
      r.stdout,
      /^\? net\.core\.wmem_max: could not be read: .*wmem_max: more than 4096 bytes \(reading stopped there\)$/m,
    );
    assert.match(r.stdout, /^Udp\.RcvbufErrors\s+-\s+-\s+unknown$/m);
    assert.match(r.stdout, /^softnet\.dropped\s+-\s+-\s+unknown$/m);
    assert.doesNotMatch(r.stdout, /All checks hold/);
    assert.match(
      r.stdout,
      /^Nothing could be read under .*: no check holds or fails \(\d+ unknown, the rest missing\)\.$/m,
    );
    // --sysctl-conf is no all-clear either
    const conf = doctor('--proc-root', root, '--sysctl-conf');
    assert.equal(conf.status, 3);
    assert.match(conf.stdout, /^# Could not be read here, so not judged: net\.core\.rmem_max, /m);
    assert.doesNotMatch(conf.stdout, /every buffer sysctl holds the targets/);
    // one check unreadable among good ones: the rest are judged, the summary names the unknown
    const one = fakeProc({ ...GOOD, 'net.core.wmem_max': 'x'.repeat(5000) });
    const partly = doctor('--proc-root', one);
    rmSync(one, { recursive: true, force: true });
    assert.equal(partly.status, 0, partly.stdout);
    assert.match(
      partly.stdout,
      /^The checks that could be read hold; 1 check could not be read \(unknown\)\.$/m,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('an unreadable proc root (EACCES to a user): unknown rows, exit 3', {
  skip:
    process.getuid?.() !== 0
      ? 'needs root to run doctor as another user (setpriv)'
      : spawnSync('setpriv', ['--version']).status !== 0
        ? 'setpriv (util-linux) is missing'
        : false,
}, () => {
  const root = fakeProc(GOOD);
  try {
    spawnSync('chmod', ['-R', 'a+rX', root]);
    for (const n of Object.keys(GOOD)) spawnSync('chmod', ['000', join(root, 'sys', ...n.split('.'))]);
    spawnSync('chmod', ['000', join(root, 'net/snmp'), join(root, 'net/softnet_stat')]);
    const r = spawnSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        ...SOCKBUF_ARGV,
        'doctor',
        '--proc-root',
        root,
      ],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, SOCKBUF_DOCTOR_HISTORY: '/dev/null/none' },
      },
    );
    assert.equal(r.status, 3, r.stdout + r.stderr);
    assert.match(r.stdout, /^\? net\.core\.rmem_max: could not be read: .*rmem_max: EACCES$/m);
    assert.match(r.stdout, /^\? Udp\.RcvbufErrors: could not be read: cannot read .*snmp: EACCES$/m);
    assert.match(r.stdout, /^Nothing could be read under /m);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// issue 44 item 4: the access check took ENOENT (no rmem_max under the root) for "writable", so a
// garbage root still showed `/proc/sys writable … info`.
test('a proc root without sys/net/core/rmem_max: /proc/sys is unknown, never "writable"', () => {
  const empty = mkdtempSync(join(tmpdir(), 'sockbuf-proc-empty-'));
  // a /proc tree by its shape (sys/ and net/), with nothing in it
  for (const d of ['sys', 'net']) mkdirSync(join(empty, d));
  try {
    assert.equal(procSysReadOnly(empty), undefined);
    const r = doctor('--proc-root', empty);
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stdout, /^\/proc\/sys\s+-\s+-\s+unknown$/m);
    assert.match(r.stdout, /^\? \/proc\/sys: could not tell whether it is writable: /m);
    assert.doesNotMatch(r.stdout, /writable by root/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
  // a real rmem_max that root may write: writable (not unknown)
  assert.equal(typeof procSysReadOnly('/proc'), 'boolean');
});
