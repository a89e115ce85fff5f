// How the exporter runs in a fleet: docs/deploy/sockbuf-exporter.service (systemd) and
// docs/deploy/sockbuf-exporter-daemonset.yaml (Kubernetes), parsed and checked, then run the way each says
// (root only): the unit's unprivileged user with its ambient capabilities; the DaemonSet's uid 0 with
// only its added capabilities, no_new_privs and a read-only root (setpriv and a private mount
// namespace stand in for systemd and the container runtime). Each must serve /metrics and name the
// process behind a socket of another user, which is what the capabilities are there for.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { SOCKBUF_ARGV } from '../cli/argv.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UNIT = readFileSync(join(ROOT, 'docs/deploy/sockbuf-exporter.service'), 'utf8');
const MANIFEST = readFileSync(join(ROOT, 'docs/deploy/sockbuf-exporter-daemonset.yaml'), 'utf8');
/** The manifest's documents, as kubectl apply reads them. */
const DOCS = parseAllDocuments(MANIFEST).map((d) => d.toJS());
const DAEMONSET = DOCS.find((d) => d.kind === 'DaemonSet');
const ROOT_ONLY = process.getuid?.() === 0 ? false : 'needs root (setpriv, a mount namespace)';
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

/** A systemd unit: section → key → its values (a key may repeat). Comments and blank lines dropped. */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(\w+)\]$/.exec(line);
    if (head) {
      section = new Map();
      out.set(head[1], section);
      continue;
    }
    const kv = /^(\w+)=(.*)$/.exec(line);
    assert.ok(kv && section, `not a unit line: ${line}`);
    section.set(kv[1], [...(section.get(kv[1]) ?? []), kv[2]]);
  }
  return out;
}

/** CAP_SYS_PTRACE / SYS_PTRACE → sys_ptrace, as setpriv spells it. */
const capName = (c: string) => c.replace(/^CAP_/, '').toLowerCase();

/** A UDP socket that dropped datagrams (not read, 2 KiB buffer), held by python3 as nobody. */
async function droppingSocket() {
  const py =
    'import socket,sys\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n' +
    's.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,2048)\ns.bind(("127.0.0.1",0))\n' +
    'c=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n' +
    '[c.sendto(b"x"*1000,s.getsockname()) for i in range(100)]\n' +
    'print(s.getsockname()[1],flush=True)\nsys.stdin.read()';
  const child = spawn('setpriv', [...NOBODY, '/usr/bin/python3', '-c', py]);
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(String(d).trim()));
    child.once('close', (code) => reject(new Error(`python3 exited ${code}`)));
  });
  return { port, pid: String(child.pid), close: () => child.kill() };
}

/** Runs an exporter command line until it serves; returns its /metrics text and /proc status. */
async function scrape(cmd: string, args: string[]) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.once('close', r));
  try {
    let url: string | undefined;
    for (let i = 0; i < 300 && !url && child.exitCode === null; i++) {
      url = /serving (\S+)/.exec(stderr)?.[1];
      if (!url) await sleep(50);
    }
    assert.ok(url, `the exporter did not start: ${stderr}`);
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return { metrics: await (await fetch(url)).text(), status, stderr };
  } finally {
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
}

const ownerLine = (metrics: string, port: string) =>
  metrics.split('\n').find((l) => l.startsWith('sockbuf_socket_owner_info{') && l.includes(`port="${port}"`));

test('the systemd unit: sockbuf exporter as an unprivileged dynamic user with two ambient capabilities', () => {
  const unit = parseUnit(UNIT);
  const service = unit.get('Service');
  assert.ok(service);
  const [exec] = service.get('ExecStart') ?? [];
  assert.match(exec, /^sockbuf exporter --listen 0\.0\.0\.0:9477$/, 'found in /usr/local/bin or /usr/bin');
  assert.deepEqual(service.get('DynamicUser'), ['yes']);
  assert.deepEqual(service.get('NoNewPrivileges'), ['yes']);
  assert.deepEqual(service.get('AmbientCapabilities'), ['CAP_SYS_PTRACE CAP_DAC_READ_SEARCH']);
  assert.deepEqual(service.get('CapabilityBoundingSet'), service.get('AmbientCapabilities'));
  assert.deepEqual(service.get('ProtectSystem'), ['strict']);
  assert.equal(service.get('MemoryDenyWriteExecute'), undefined, "Node's JIT needs W+X pages");
  assert.equal(service.get('ProtectProc'), undefined, 'every process stays visible for the names');
  assert.deepEqual(service.get('RestrictAddressFamilies'), ['AF_INET AF_INET6 AF_NETLINK AF_UNIX']);
  assert.deepEqual(unit.get('Install')?.get('WantedBy'), ['multi-user.target']);
  assert.deepEqual(service.get('IPAddressDeny'), ['any']);
  assert.match(service.get('IPAddressAllow')?.[0] ?? '', /^localhost /);
  assert.deepEqual(service.get('MemoryMax'), ['384M']);
  assert.deepEqual(service.get('SystemCallFilter'), ['@system-service', '~@privileged @resources']);
});

test('systemd-analyze security rates the unit at most 3.0 (offline, as a file)', {
  skip:
    spawnSync('systemd-analyze', ['security', '--help']).status !== 0
      ? 'systemd-analyze is not installed'
      : false,
}, () => {
  const file = join(tmpdir(), `sockbuf-exporter-${process.pid}.service`);
  try {
    writeFileSync(file, UNIT);
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', file], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    const level = /Overall exposure level for \S+: ([\d.]+)/.exec(r.stdout)?.[1];
    assert.ok(level, `${r.stdout}${r.stderr}`);
    assert.ok(Number(level) <= 3.0, `exposure ${level}`);
    // and it can fail: the unit without its sandboxing rates worse
    writeFileSync(file, UNIT.replace(/^(SystemCallFilter|IPAddress\w+|ProtectSystem|Protect\w+)=.*$/gm, ''));
    const bare = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', file], {
      encoding: 'utf8',
    });
    assert.ok(Number(/Overall exposure level for \S+: ([\d.]+)/.exec(bare.stdout)?.[1]) > 3.0, bare.stdout);
  } finally {
    rmSync(file, { force: true });
  }
});

test("the DaemonSet's command line on an IPv6 node: [$(HOST_IP)]:9477 with HOST_IP=::1 serves, as does an IPv4 one", {
  timeout: 60_000,
}, async () => {
  const [c] = DAEMONSET.spec.template.spec.containers;
  for (const hostIp of ['::1', '127.0.0.1']) {
    // the kubelet substitutes $(HOST_IP) from status.hostIP; port 0 instead of 9477
    const args = (c.args as string[]).map((a) => a.replace('$(HOST_IP)', hostIp).replace(':9477', ':0'));
    const { metrics, stderr } = await scrape(process.execPath, [...SOCKBUF_ARGV, ...args]);
    const shown = hostIp.includes(':') ? `[${hostIp}]` : hostIp;
    assert.match(stderr, new RegExp(`serving http://${shown.replace(/[[\].]/g, '\\$&')}:\\d+/metrics`));
    assert.match(metrics, /^sockbuf_build_info\{/m);
  }
  // what the manifest said before: an IPv6 address without brackets is refused (exit 2)
  const old = spawnSync(process.execPath, [...SOCKBUF_ARGV, 'exporter', '--listen', '::1:0'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(old.status, 2, old.stderr);
});

test('systemd-analyze verify accepts the unit (ExecStart pointed at this checkout)', {
  skip: spawnSync('systemd-analyze', ['--version']).error ? 'systemd-analyze is not installed' : false,
}, () => {
  const file = join(tmpdir(), `sockbuf-exporter-${process.pid}.service`);
  try {
    const here = [process.execPath, ...SOCKBUF_ARGV].join(' ');
    writeFileSync(file, UNIT.replace('ExecStart=sockbuf', `ExecStart=${here}`));
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '', 'no warning either (an unknown key is only a warning)');
    // and it can fail: a misspelt key
    writeFileSync(file, UNIT.replace('NoNewPrivileges=', 'NoNewPrivilege='));
    const bad = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8', timeout: 30_000 });
    assert.match(bad.stderr, /Unknown key 'NoNewPrivilege'/);
  } finally {
    rmSync(file, { force: true });
  }
});

test('run as the unit says: the exporter names a root process behind a socket', {
  skip: ROOT_ONLY,
  timeout: 30_000,
}, async () => {
  const service = parseUnit(UNIT).get('Service');
  const caps = (service?.get('AmbientCapabilities')?.[0] ?? '').split(' ').map(capName);
  const args = (service?.get('ExecStart')?.[0] ?? '').split(' ').slice(1);
  assert.deepEqual(args.slice(0, 2), ['exporter', '--listen']);
  args[2] = '127.0.0.1:0';
  // a root-owned socket with drops: this process's
  const rx = dgram.createSocket({ type: 'udp4', recvBufferSize: 2048 });
  const tx = dgram.createSocket('udp4');
  try {
    rx.on('message', () => {});
    await new Promise<void>((r) => rx.bind(0, '127.0.0.1', r));
    // @ts-expect-error: Node internal, stops reading so the kernel queue fills and drops
    rx._handle.recvStop();
    const port = String(rx.address().port);
    for (let i = 0; i < 60; i++)
      await new Promise((r) => tx.send(Buffer.alloc(1000), Number(port), '127.0.0.1', r));
    const set = `-all,${caps.map((c) => `+${c}`).join(',')}`;
    const { metrics, status } = await scrape('setpriv', [
      ...NOBODY,
      `--inh-caps=${set}`,
      `--ambient-caps=${caps.map((c) => `+${c}`).join(',')}`,
      `--bounding-set=${set}`,
      '--no-new-privs',
      process.execPath,
      ...SOCKBUF_ARGV,
      ...args,
    ]);
    assert.match(status, /^Uid:\s+65534\s/m);
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    assert.match(status, /^CapEff:\s+0+80004$/m, 'exactly CAP_DAC_READ_SEARCH (2) and CAP_SYS_PTRACE (19)');
    assert.match(ownerLine(metrics, port) ?? metrics, new RegExp(`command="node",pid="${process.pid}"`));
  } finally {
    rx.close();
    tx.close();
  }
});

test('the DaemonSet: host network and PIDs, read-only root, uid 0 with two capabilities only', () => {
  const ds = DAEMONSET;
  assert.equal(ds.apiVersion, 'apps/v1');
  assert.equal(ds.kind, 'DaemonSet');
  const pod = ds.spec.template.spec;
  assert.deepEqual(ds.spec.selector.matchLabels, ds.spec.template.metadata.labels);
  assert.equal(pod.hostNetwork, true);
  assert.equal(pod.hostPID, true);
  assert.equal(pod.dnsPolicy, 'ClusterFirstWithHostNet');
  assert.equal(pod.containers.length, 1);
  const [c] = pod.containers;
  assert.deepEqual(c.args, ['exporter', '--listen', '[$(HOST_IP)]:9477']);
  assert.deepEqual(c.env, [{ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }]);
  assert.deepEqual(c.ports, [{ name: 'metrics', containerPort: 9477 }]);
  for (const probe of [c.readinessProbe, c.livenessProbe])
    assert.deepEqual(probe.httpGet, { path: '/metrics', port: 'metrics' });
  // from the measured peak at 10 000 sockets (docs/fleet.md#memory), with headroom
  assert.equal(c.resources.limits.memory, '384Mi');
  assert.match(c.image, /^sockbuf-exporter:\d+\.\d+\.\d+$/, 'the image docs/deploy/Dockerfile builds');
  const sc = c.securityContext;
  assert.equal(sc.readOnlyRootFilesystem, true);
  assert.equal(sc.allowPrivilegeEscalation, false);
  assert.equal(sc.privileged, false);
  assert.equal(sc.runAsUser, 0);
  assert.deepEqual(sc.capabilities, { drop: ['ALL'], add: ['SYS_PTRACE', 'DAC_READ_SEARCH'] });
});

test('run as the DaemonSet says: read-only root, its capabilities, a process of another user named', {
  skip: ROOT_ONLY,
  timeout: 30_000,
}, async () => {
  const [c] = DAEMONSET.spec.template.spec.containers;
  const caps: string[] = c.securityContext.capabilities.add.map(capName);
  const args = (c.args as string[]).map((a) => a.replace('$(HOST_IP)', '127.0.0.1').replace(':9477', ':0'));
  const owner = await droppingSocket();
  try {
    const set = `-all,${caps.map((x) => `+${x}`).join(',')}`;
    // every mount the exporter reads from (root, the checkout, /tmp) read-only in a private mount
    // namespace; a write must then fail, or the stand-in is not read-only
    const script =
      'for p in / "$ROOT" /tmp; do mount -o remount,bind,ro "$(findmnt -n -o TARGET --target "$p")" || exit 9; done; ' +
      'for f in "$ROOT/.sockbuf-rw" /tmp/.sockbuf-rw; do ' +
      'if touch "$f" 2>/dev/null; then rm -f "$f"; echo "still writable: $f" >&2; exit 9; fi; done; ' +
      'exec "$@"';
    const { metrics, status, stderr } = await scrape('unshare', [
      '--mount',
      '--propagation',
      'private',
      'env',
      `ROOT=${ROOT}`,
      'sh',
      '-c',
      script,
      'sh',
      'setpriv',
      `--inh-caps=${set}`,
      `--bounding-set=${set}`,
      '--no-new-privs',
      process.execPath,
      ...SOCKBUF_ARGV,
      ...args,
    ]);
    assert.doesNotMatch(stderr, /still writable/);
    assert.match(status, /^Uid:\s+0\s/m);
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    assert.match(status, /^CapEff:\s+0+80004$/m, 'exactly CAP_DAC_READ_SEARCH (2) and CAP_SYS_PTRACE (19)');
    assert.match(
      ownerLine(metrics, owner.port) ?? metrics,
      new RegExp(`command="python3",pid="${owner.pid}"`),
    );
  } finally {
    owner.close();
  }
});
