// Issue 43, items 2 and 3: a pinned buffer at the kernel's ceiling is named as such (2 × rmem_max or
// wmem_max, the sysctl and its value, tcp_rmem/tcp_wmem max, the two ways out), an unreadable sysctl
// says unknown, and the setter is named per program and per socket (osiris's follower and leader,
// RabbitMQ's AMQP listener, Erlang distribution), never a wrong specific knob. The rule tables pure;
// then real sockets as osiris makes them, in a network namespace of their own (pin-advice.child.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { advisePins, ceilingText, type HostLimits, pinInfo } from '../../src/observe/pin-advice.js';
import {
  type PlaceContext,
  SETTERS,
  type SocketPlace,
  setterOf,
  socketRole,
} from '../../src/observe/programs.js';

/** The seed's hosts: rmem_max = wmem_max = 229376, tcp_rmem max 6 MiB, tcp_wmem max 4 MiB. */
const SEED: HostLimits = {
  tcpRmemMax: 6291456,
  tcpWmemMax: 4194304,
  rmemMax: 229376,
  wmemMax: 229376,
  ephemeralPorts: [32768, 60999],
};
const tcp = (localPort: number, remotePort: number, state = 'established'): SocketPlace => ({
  protocol: 'tcp',
  state,
  localPort,
  remotePort,
});
const ctx = (...listening: number[]): PlaceContext => ({
  listening: new Set(listening),
  ephemeralPorts: [32768, 60999],
});

test('ceilingText: 2 × rmem_max is the ceiling, with the sysctl, its value, tcp_rmem max and both ways out', () => {
  const t = ceilingText('receive', 458752, SEED);
  assert.match(
    t,
    /at the kernel's ceiling, 2 × net\.core\.rmem_max \(net\.core\.rmem_max = 229376, 224 KiB\)/,
  );
  assert.match(t, /asked SO_RCVBUF for at least 229376 bytes and the kernel clamped it/);
  assert.match(t, /autotuning would allow up to 6 MiB \(tcp_rmem max\)/);
  assert.match(t, /stop setting it .*or raise net\.core\.rmem_max, which keeps it pinned/);
  const s = ceilingText('send', 458752, SEED);
  assert.match(
    s,
    /2 × net\.core\.wmem_max \(net\.core\.wmem_max = 229376.*SO_SNDBUF.*4 MiB \(tcp_wmem max\)/,
  );
  // below the ceiling: nothing (reported as before)
  assert.equal(ceilingText('receive', 32768, SEED), '');
  // wmem_max is read apart from rmem_max: a send buffer at 2 × rmem_max is not at wmem_max's ceiling
  assert.equal(ceilingText('send', 458752, { ...SEED, wmemMax: 1 << 20 }), '');
  // unreadable: unknown, never a guessed default
  const hidden = { ...SEED, rmemMax: undefined, wmemMax: undefined };
  assert.match(ceilingText('receive', 458752, hidden), /net\.core\.rmem_max is unknown .*is unknown/);
  assert.match(ceilingText('send', 425984, hidden), /net\.core\.wmem_max is unknown/);
  assert.doesNotMatch(ceilingText('receive', 425984, hidden), /212992|ceiling, 2/);
});

test("socketRole: a connection whose listener is gone is accepted when its port is no ephemeral one and the peer's is", () => {
  assert.equal(socketRole(tcp(5672, 0, 'listen'), ctx(5672)), 'listener');
  assert.equal(socketRole(tcp(5672, 40001), ctx(5672)), 'accepted');
  assert.equal(socketRole(tcp(6000, 45678), ctx()), 'accepted', "osiris's follower, listener closed");
  assert.equal(socketRole(tcp(45678, 6000), ctx()), 'client', "osiris's leader");
  assert.equal(socketRole(tcp(45678, 6000), ctx(6000)), 'client');
  assert.equal(socketRole(tcp(5000, 443), ctx()), 'client', 'a client bound to a fixed port');
  assert.equal(
    socketRole({ protocol: 'udp', state: 'unconnected', localPort: 53, remotePort: 0 }, ctx()),
    'listener',
  );
});

test('setterOf: one program, several sockets: osiris, Erlang distribution, RabbitMQ listeners, else the generic', () => {
  const id = (command: string | undefined, s: SocketPlace, c: PlaceContext) => setterOf(command, s, c)?.id;
  assert.equal(id('beam.smp', tcp(6000, 45678), ctx()), 'osiris-follower');
  assert.equal(
    id('beam.smp', tcp(6123, 45678), ctx(6123)),
    'osiris-follower',
    'in port_range, listener open',
  );
  assert.equal(id('beam.smp', tcp(7000, 45678), ctx()), 'osiris-follower', 'port_range moved: listener gone');
  assert.equal(id('beam.smp', tcp(45678, 6000), ctx()), 'osiris-leader');
  assert.equal(id('beam.smp', tcp(25672, 40000), ctx(25672)), 'erlang-dist-listen');
  assert.equal(id('beam.smp', tcp(40000, 25672), ctx()), 'erlang-dist-connect');
  assert.equal(id('beam.smp', tcp(5672, 40000), ctx(5672)), 'rabbitmq-amqp');
  assert.equal(id('beam.smp', tcp(5552, 40000), ctx(5552)), 'rabbitmq-stream');
  assert.equal(
    id('beam.smp', tcp(34567, 40000), ctx(34567)),
    'erlang-listener',
    'a listener on a port of its own',
  );
  assert.equal(
    id('beam.smp', tcp(40000, 443), ctx()),
    'erlang',
    'an outgoing connection: the generic Erlang',
  );
  assert.equal(id('java,java', tcp(9000, 40000), ctx(9000)), 'java');
  assert.equal(id('python3', tcp(9000, 40000), ctx(9000)), undefined);
  assert.equal(id(undefined, tcp(6000, 45678), ctx()), undefined);
  // the words: osiris's own setting, never tcp_listen_options; the listeners' never osiris's
  const text = (i: string) => JSON.stringify(SETTERS.find((p) => p.id === i));
  for (const i of ['osiris-follower', 'osiris-leader', 'erlang-dist-listen', 'erlang-dist-connect', 'erlang'])
    assert.doesNotMatch(text(i), /tcp_listen_options/, i);
  assert.match(text('rabbitmq-amqp'), /"rcvbuf":"RabbitMQ: remove tcp_listen_options\.recbuf/);
  assert.match(text('rabbitmq-stream'), /stream\.tcp_listen_options\.recbuf/);
  assert.match(
    text('erlang-listener'),
    /tcp_listen_options for AMQP, stream\.tcp_listen_options for streams/,
  );
  assert.match(text('osiris-follower'), /replica_recbuf \(default 2041500/);
  assert.match(text('osiris-leader'), /replica_sndbuf \(default 1469880/);
  assert.match(text('osiris-follower'), /up to 1\.10\.3/);
  assert.match(text('erlang-dist-connect'), /inet_dist_connect_options \(or inet_default_connect_options\)/);
  // each side an entry leaves out is the generic setsockopt, not another entry's knob
  assert.equal(SETTERS.find((p) => p.id === 'osiris-follower')?.sndbuf, undefined);
  assert.equal(SETTERS.find((p) => p.id === 'osiris-leader')?.rcvbuf, undefined);
});

test("advisePins: the follower's pin names the ceiling and replica_recbuf; the leader alone replica_sndbuf and wmem_max", () => {
  const follower = {
    ...tcp(6000, 45678),
    command: 'beam.smp',
    rcvbufBytes: 458752,
    sndbufBytes: 87040,
    flags: [{ kind: 'pinned-rcvbuf', reason: 'receive buffer 448 KiB' }],
  };
  advisePins(follower, SEED, ctx());
  const f = follower.flags[0].reason;
  assert.match(f, /net\.core\.rmem_max = 229376/);
  assert.match(f, /replica_recbuf/);
  assert.doesNotMatch(f, /tcp_listen_options/);
  // osiris's own ways out, not the generic "stop setting it": no setting stops osiris's call
  assert.doesNotMatch(f, /stop setting it/);
  assert.match(f, /no setting removes the call\. Ways out: raise net\.core\.rmem_max/);
  const leader = {
    ...tcp(45678, 6000),
    command: 'beam.smp',
    rcvbufBytes: 131072,
    sndbufBytes: 458752,
    flags: [{ kind: 'rwnd-limited', reason: 'rwnd-limited 88% of busy time' }],
  };
  advisePins(leader, SEED, ctx());
  const l = leader.flags[0].reason;
  assert.match(l, /the follower's osiris sets the receive buffer .* replica_recbuf/);
  assert.match(l, /its own send buffer is pinned too: .*net\.core\.wmem_max = 229376/);
  assert.match(l, /replica_sndbuf \(default 1469880/);
  assert.doesNotMatch(l, /tcp_listen_options/);
  // the AMQP listener's connection pinned below the ceiling: tcp_listen_options, no ceiling
  const amqp = {
    ...tcp(5672, 40000),
    command: 'beam.smp',
    rcvbufBytes: 32768,
    flags: [{ kind: 'pinned-rcvbuf', reason: 'receive buffer 32 KiB' }],
  };
  advisePins(amqp, SEED, ctx(5672));
  assert.match(
    amqp.flags[0].reason,
    /RabbitMQ's AMQP listener\): RabbitMQ: remove tcp_listen_options\.recbuf/,
  );
  assert.doesNotMatch(amqp.flags[0].reason, /ceiling|unknown/);
  // an unknown program: the ceiling still, no program's knob; a stalled reader: nothing
  const other = {
    ...tcp(9000, 40000),
    command: 'python3',
    rcvbufBytes: 458752,
    flags: [
      { kind: 'pinned-rcvbuf', reason: 'x' },
      { kind: 'stalled-reader', reason: 'y' },
    ],
  };
  advisePins(other, SEED, ctx(9000));
  assert.match(other.flags[0].reason, /^x; it sits at the kernel's ceiling.*which keeps it pinned$/);
  assert.doesNotMatch(other.flags[0].reason, / in python3/);
  assert.equal(other.flags[1].reason, 'y');
});

test("pinInfo: the exporter's labels for the same facts: buffer, setter (empty where unknown), ceiling yes/no/unknown", () => {
  const row = (p: SocketPlace, flags: string[], rb?: number, tb?: number) => ({
    ...p,
    rcvbufBytes: rb,
    sndbufBytes: tb,
    flags: flags.map((kind) => ({ kind, reason: '' })),
  });
  const none = new Set<number>();
  assert.deepEqual(pinInfo(row(tcp(6000, 45678), ['pinned-rcvbuf'], 458752), 'beam.smp', SEED, none), [
    { buffer: 'receive', setter: 'osiris-follower', ceiling: 'yes' },
  ]);
  // the leader: rwnd-limited with its own tb at 2 × wmem_max; osiris sets no receive buffer there
  assert.deepEqual(pinInfo(row(tcp(45678, 6000), ['rwnd-limited'], 131072, 458752), 'beam.smp', SEED, none), [
    { buffer: 'send', setter: 'osiris-leader', ceiling: 'yes' },
  ]);
  assert.deepEqual(pinInfo(row(tcp(45678, 6000), ['pinned-rcvbuf'], 32768), 'beam.smp', SEED, none), [
    { buffer: 'receive', setter: '', ceiling: 'no' },
  ]);
  // rwnd-limited with an autotuned send buffer: nothing of its own to say
  assert.deepEqual(
    pinInfo(row(tcp(45678, 6000), ['rwnd-limited'], 131072, 87040), 'beam.smp', SEED, none),
    [],
  );
  assert.deepEqual(
    pinInfo(
      row(tcp(5672, 40000), ['pinned-rcvbuf', 'pinned-sndbuf'], 32768, 32768),
      'beam.smp',
      SEED,
      new Set([5672]),
    ),
    [
      { buffer: 'receive', setter: 'rabbitmq-amqp', ceiling: 'no' },
      { buffer: 'send', setter: 'rabbitmq-amqp', ceiling: 'no' },
    ],
  );
  const hidden = { ...SEED, rmemMax: undefined, wmemMax: undefined };
  assert.deepEqual(
    pinInfo(row(tcp(9000, 40000), ['pinned-rcvbuf', 'stalled-reader'], 458752), undefined, hidden, none),
    [{ buffer: 'receive', setter: '', ceiling: 'unknown' }],
  );
});

const root = process.getuid?.() === 0;
const child = fileURLToPath(new URL('./pin-advice.child.ts', import.meta.url));

test("real sockets as osiris makes them, each side alone: the follower's reason names the ceiling and replica_recbuf, the leader's replica_sndbuf and wmem_max; the AMQP listener tcp_listen_options", {
  skip: !root && 'needs root for a network namespace of its own (unshare -n)',
  timeout: 60_000,
}, () => {
  // about 7 s (6.9 s here, load ~10): two socket pairs write for at most 12 s; inspect samples 1 s apart, the
  // doctor 0.5 s, the exporter two scrapes 1 s apart before and after the leader reconnects
  const r = spawnSync(
    'unshare',
    [
      '-n',
      'sh',
      '-c',
      "ip link set lo up && sysctl -qw net.ipv4.tcp_rmem='4096 131072 134217728' net.ipv4.tcp_wmem='4096 16384 134217728' && " +
        `exec "${process.execPath}" --import tsx "${child}"`,
    ],
    { encoding: 'utf8', timeout: 45_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, InspectedSocket[]> & {
    host: HostLimits;
    series: { before: string[]; after: string[]; leaderPort: number; newLeaderPort: number };
    doctor: string[];
  };
  const show = (rows: InspectedSocket[]) => JSON.stringify(rows, null, 1);
  const reason = (rows: InspectedSocket[], kind: string) =>
    rows.flatMap((x) => x.flags.filter((f) => f.kind === kind).map((f) => f.reason)).join('\n');
  const rmem = out.host.rmemMax;
  const wmem = out.host.wmemMax;
  assert.ok(rmem && wmem, 'rmem_max and wmem_max read in the namespace');
  // the follower alone: accepted (its listener closed), beam.smp, rb clamped at 2 × rmem_max
  const [follower] = out.follower;
  assert.equal(follower?.role, 'accepted', show(out.follower));
  assert.equal(follower.command, 'beam.smp');
  assert.equal(follower.rcvbufBytes, 2 * rmem);
  const f = reason(out.follower, 'pinned-rcvbuf');
  assert.match(
    f,
    new RegExp(`at the kernel's ceiling, 2 × net\\.core\\.rmem_max \\(net\\.core\\.rmem_max = ${rmem}`),
  );
  assert.match(f, /replica_recbuf/);
  assert.doesNotMatch(f, /tcp_listen_options/);
  // both ends on this host: the leader rwnd-limited by the follower's pin, its own tb at 2 × wmem_max
  const leader = out.both.find((x) => x.remotePort === 6000);
  assert.equal(leader?.role, 'client', show(out.both));
  assert.equal(leader.sndbufBytes, 2 * wmem);
  const l = reason([leader], 'rwnd-limited');
  assert.match(l, /replica_recbuf/, show([leader]));
  assert.match(l, new RegExp(`net\\.core\\.wmem_max = ${wmem}`));
  assert.match(l, /replica_sndbuf/);
  assert.doesNotMatch(l, /tcp_listen_options/);
  // the AMQP listener's connection, pinned below the ceiling: tcp_listen_options, no ceiling
  const amqp = reason(out.amqp, 'pinned-rcvbuf');
  assert.match(amqp, /tcp_listen_options\.recbuf/, show(out.amqp));
  assert.doesNotMatch(amqp, /ceiling|replica_/);
  // rmem_max hidden: unknown, never a guessed size
  const hidden = reason(out.followerHidden, 'pinned-rcvbuf');
  assert.match(hidden, /net\.core\.rmem_max is unknown/, show(out.followerHidden));
  assert.doesNotMatch(hidden, /212992|at the kernel's ceiling/);

  // the doctor's sockets section says the same of the follower's socket
  const doc = out.doctor.find((l) => l.startsWith('! pinned-rcvbuf: tcp 127.0.0.1:6000 →'));
  assert.match(
    doc ?? '',
    /\(beam\.smp, pid \d+\): .*net\.core\.rmem_max = \d+.*replica_recbuf/,
    out.doctor.join('\n'),
  );
  assert.doesNotMatch(doc ?? '', /tcp_listen_options/);

  // the exporter (issue 43, item 4): the follower's socket keyed {role="accepted", local port, command},
  // the same series after the leader reconnected from a new ephemeral port; who set it and the ceiling
  const { before, after, leaderPort, newLeaderPort } = out.series;
  assert.notEqual(leaderPort, newLeaderPort, 'the leader reconnected from another port');
  const accepted = '{protocol="tcp",role="accepted",address="127.0.0.1",port="6000",command="beam.smp"';
  assert.ok(before.includes(`sockbuf_socket_flagged${accepted},kind="pinned-rcvbuf"} 1`), before.join('\n'));
  assert.ok(
    before.includes(
      `sockbuf_socket_pin_info${accepted},buffer="receive",setter="osiris-follower",ceiling="yes"} 1`,
    ),
    before.join('\n'),
  );
  assert.ok(
    before.some((l) =>
      /^sockbuf_socket_pin_info\{[^}]*role="client"[^}]*setter="osiris-leader",ceiling="yes"\}/.test(l),
    ),
    before.join('\n'),
  );
  const ofFollower = (xs: string[]) => xs.filter((l) => l.includes('role="accepted"')).sort();
  assert.deepEqual(ofFollower(after), ofFollower(before), 'the same series after the reconnect');
  for (const l of [...before, ...after])
    assert.ok(!l.includes(`"${leaderPort}"`) && !l.includes(`"${newLeaderPort}"`), l);
});
