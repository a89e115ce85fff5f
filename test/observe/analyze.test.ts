import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  analyze,
  autotunedWscale,
  filterRows,
  type HostLimits,
  type InspectedSocket,
  type Snapshot,
} from '../../src/observe/analyze.js';
import { FlagMemory } from '../../src/observe/flag-memory.js';
import type { DiagSocket } from '../../src/observe/sockdiag.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../src/sys/constants.js';
import type { MemInfo } from '../../src/sys/meminfo.js';
import type { TcpInfo } from '../../src/sys/tcpinfo.js';

const HOST: HostLimits = { tcpRmemMax: 32 << 20, tcpWmemMax: 4 << 20, rmemMax: 4 << 20 };
let cookie = 1;

function mem(p: Partial<MemInfo> = {}): MemInfo {
  return {
    rmemAlloc: 0,
    rcvbuf: 131072,
    wmemAlloc: 0,
    sndbuf: 4 << 20,
    fwdAlloc: 0,
    wmemQueued: 0,
    optmem: 0,
    drops: 0,
    ...p,
  };
}

function tcp(
  local: number,
  remote: number,
  info: Partial<TcpInfo>,
  skmem: Partial<MemInfo> = {},
): DiagSocket {
  return {
    family: 4,
    protocol: IPPROTO_TCP,
    state: 1,
    stateName: 'established',
    localHost: '127.0.0.1',
    localPort: local,
    remoteHost: '127.0.0.1',
    remotePort: remote,
    ifindex: 0,
    cookie: String(cookie++),
    rqueue: 0,
    wqueue: 0,
    uid: 0,
    inode: 1000 + local,
    tcpInfo: { rtt: 50, sndCwnd: 10, sndMss: 65483, rcvWscale: 10, sndWscale: 10, ...info } as TcpInfo,
    skmem: mem(skmem),
  };
}

function udp(port: number, skmem: Partial<MemInfo>, c?: string): DiagSocket {
  return {
    ...tcp(port, 0, {}),
    protocol: IPPROTO_UDP,
    state: 7,
    stateName: 'close',
    remoteHost: '0.0.0.0',
    tcpInfo: undefined,
    skmem: mem({ rcvbuf: 8192, ...skmem }),
    cookie: c ?? String(cookie++),
  };
}

const snap = (sockets: DiagSocket[], atMs = 0): Snapshot => ({ atMs, sockets });
const busy = (pctRwnd: number, pctSndbuf = 0) => ({
  busyTime: 1_000_000,
  rwndLimited: pctRwnd * 10_000,
  sndbufLimited: pctSndbuf * 10_000,
});

test('autotunedWscale follows the kernel: ilog2(max(tcp_rmem[2], rmem_max)) - 15', () => {
  assert.equal(autotunedWscale(HOST), 10); // 32 MiB, this host
  assert.equal(autotunedWscale({ tcpRmemMax: 6291456, tcpWmemMax: 4194304, rmemMax: 229376 }), 7); // seed 000
  assert.equal(autotunedWscale({ tcpRmemMax: 1, tcpWmemMax: 1, rmemMax: 1 }), 0);
});

test('seed 000 on one host: the pinned pair is flagged at both ends, the autotuned pair is not', () => {
  const rows = analyze(
    snap([
      // pinned: receiver 2000 (SO_RCVBUF 8 KiB before listen → window scale 0), sender 3000
      tcp(3000, 2000, { ...busy(98), sndWscale: 0, sndWnd: 8192 }),
      tcp(2000, 3000, { rcvWscale: 0 }, { rcvbuf: 16384, rmemAlloc: 9000 }),
      // autotuned, with a receiver that reads slowly: rwnd-limited too, but by the reader, not a buffer
      tcp(3001, 2001, { ...busy(93) }),
      tcp(2001, 3001, {}, { rcvbuf: 705416, rmemAlloc: 680000 }),
    ]),
    HOST,
  );
  const [sender, receiver, autoSender, autoReceiver] = rows;
  assert.deepEqual(
    sender.flags.map((f) => f.kind),
    ['rwnd-limited'],
  );
  assert.match(sender.flags[0].reason, /rwnd-limited 98% .*peer 127\.0\.0\.1:2000 .*16 KiB.*window scale 0/);
  assert.deepEqual(
    receiver.flags.map((f) => f.kind),
    ['pinned-rcvbuf'],
  );
  assert.match(receiver.flags[0].reason, /SO_RCVBUF/);
  assert.equal(sender.rwndLimitedPct, 98);
  assert.equal(sender.intervalSeconds, undefined);
  assert.equal(autoSender.limited, false);
  assert.equal(autoSender.rwndLimitedPct, 93);
  assert.equal(autoReceiver.limited, false);
});

test('a remote peer: judged by the window scale it offers', () => {
  const pinnedPeer = tcp(3000, 5201, { ...busy(99), sndWscale: 2, sndWnd: 65536 });
  pinnedPeer.remoteHost = '10.0.0.2';
  const autoPeer = tcp(3001, 5201, { ...busy(99), sndWscale: 7, sndWnd: 3 << 20 });
  autoPeer.remoteHost = '10.0.0.2';
  const [a, b] = analyze(snap([pinnedPeer, autoPeer]), HOST);
  assert.equal(a.flags[0]?.kind, 'rwnd-limited');
  assert.match(a.flags[0].reason, /window scale 2/);
  assert.equal(b.limited, false);
});

test('ratios over an interval come from deltas between two samples of the same socket', () => {
  const before = tcp(3000, 2000, {
    busyTime: 1_000_000,
    rwndLimited: 900_000,
    sndbufLimited: 0,
    sndWscale: 0,
  });
  const after = {
    ...before,
    tcpInfo: { ...before.tcpInfo, busyTime: 2_000_000, rwndLimited: 950_000 } as TcpInfo,
  };
  const peer = tcp(2000, 3000, { rcvWscale: 0 }, { rcvbuf: 16384 });
  const [row] = analyze(snap([after, peer], 2500), HOST, snap([before, peer], 1500));
  assert.equal(row.intervalSeconds, 1);
  assert.equal(row.rwndLimitedPct, 5, '50 ms of the last 1000 ms, not 47.5 % since the start');
  assert.equal(row.limited, false);
  const [cumulative] = analyze(snap([after, peer]), HOST);
  assert.equal(cumulative.rwndLimitedPct, 47.5);
});

test('sndbuf-limited with a send buffer far below tcp_wmem max is flagged; a grown one is not', () => {
  const [pinned, grown] = analyze(
    snap([
      tcp(3000, 2000, { ...busy(0, 60) }, { sndbuf: 131072 }),
      tcp(3001, 2001, { ...busy(0, 60) }, { sndbuf: 4 << 20 }),
    ]),
    HOST,
  );
  assert.equal(pinned.flags[0]?.kind, 'sndbuf-limited');
  assert.match(pinned.flags[0].reason, /sndbuf-limited 60% .*128 KiB.*tcp_wmem max 4 MiB/);
  assert.equal(grown.limited, false);
});

test('UDP: drops flag a socket; with two samples only new drops count', () => {
  const [once] = analyze(snap([udp(9000, { drops: 5, rmemAlloc: 8000 })]), HOST);
  assert.equal(once.flags[0]?.kind, 'udp-drops');
  assert.match(once.flags[0].reason, /5 datagrams dropped since it opened: receive buffer 8 KiB full/);
  assert.match(once.flags[0].reason, /up to 8 MiB \(rmem_max 4 MiB\)/);
  assert.equal(once.state, 'unconnected');
  const a = udp(9000, { drops: 5 }, 'u1');
  const [quiet] = analyze(snap([a], 1000), HOST, snap([a], 0));
  assert.equal(quiet.dropsInInterval, 0);
  assert.equal(quiet.limited, false);
  const [more] = analyze(snap([udp(9000, { drops: 12 }, 'u1')], 1000), HOST, snap([a], 0));
  assert.equal(more.dropsInInterval, 7);
  assert.match(more.flags[0].reason, /7 datagrams dropped in the last 1s/);
  const [clean] = analyze(snap([udp(9001, {})]), HOST);
  assert.equal(clean.limited, false);
  // a socket opened since the previous sample: every drop it has happened in the interval
  const [fresh] = analyze(snap([udp(9002, { drops: 4 }, 'u2')], 1000), HOST, snap([a], 0));
  assert.equal(fresh.dropsInInterval, 4);
  assert.match(fresh.flags[0]?.reason ?? '', /4 datagrams dropped in the last 1s/);
});

test('filterRows: port matches either end; pid, state and --limited', () => {
  const snapshot = snap([
    tcp(3000, 2000, { ...busy(98), sndWscale: 0 }),
    tcp(2000, 3000, { rcvWscale: 0 }, { rcvbuf: 16384 }),
    tcp(4000, 4001, {}),
  ]);
  snapshot.owners = new Map([[1000 + 4000, { pid: 42, command: 'x' }]]);
  const rows = analyze(snapshot, HOST);
  assert.equal(filterRows(rows, { port: 2000 }).length, 2);
  assert.equal(filterRows(rows, { pid: 42 })[0].localPort, 4000);
  assert.equal(filterRows(rows, { pid: 42 })[0].command, 'x');
  assert.equal(filterRows(rows, { state: 'listen' }).length, 0);
  assert.equal(filterRows(rows, { limitedOnly: true }).length, 2);
});

// Records from the loopback study (docs/diagnosis.md; scripts/diagnosis-study.py), one second apart.
const HOST_6_18: HostLimits = { tcpRmemMax: 32 << 20, tcpWmemMax: 4 << 20, rmemMax: 4 << 20 };
function pair(
  a: DiagSocket,
  info: Partial<TcpInfo>,
  queues: { rqueue?: number; wqueue?: number } = {},
  skmem: Partial<MemInfo> = {},
): [DiagSocket, DiagSocket] {
  const now = {
    ...a,
    ...queues,
    tcpInfo: { ...a.tcpInfo, ...info } as TcpInfo,
    skmem: { ...(a.skmem as MemInfo), ...skmem },
  };
  return [a, now];
}

test('a pinned send buffer (tb 32 KiB) full, one segment in flight, rtt 42 ms against 2 us: pinned-sndbuf from the sender alone', () => {
  const then = tcp(
    47212,
    47001,
    {
      rtt: 42066,
      minRtt: 2,
      unacked: 1,
      sndCwnd: 18,
      sndWnd: 5650432,
      busyTime: 1e6,
      bytesAcked: 1e6,
      lastDataSent: 12,
    },
    { sndbuf: 32768, wmemQueued: 66315 },
  );
  then.remoteHost = '10.0.0.2'; // the reader elsewhere: the sender's host alone must tell
  then.wqueue = 65483;
  const [, now] = pair(then, { busyTime: 2_008_000, bytesAcked: 2_506_109 });
  const [row] = analyze(snap([now], 1000), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    row.flags.map((f) => f.kind),
    ['pinned-sndbuf'],
  );
  const why = row.flags[0].reason;
  assert.match(why, /send buffer 32 KiB, far below tcp_wmem max 4 MiB, full \(Send-Q 63\.9 KiB\)/);
  assert.match(why, /1\.51 MB\/s ≈ 61\.9 KiB per round trip, rtt 42 ms \(min 0\.002 ms\)/);
  assert.match(why, /below two segments \(mss 63\.9 KiB\).*delays its ACK/);
  assert.equal(row.busyRatio, 1, 'busy 1008 ms in 1 s is clamped to 1');
  assert.equal(row.sentBytesPerSecond, 1506109);
});

test('an autotuned sender carrying load, a cwnd-limited one and an idle pinned one are not pinned-sndbuf', () => {
  const base = { rtt: 249, minRtt: 1, unacked: 0, sndCwnd: 26, sndWnd: 32901120, lastDataSent: 0 };
  const auto = tcp(
    39120,
    47021,
    { ...base, busyTime: 1e6, bytesAcked: 1e6 },
    { sndbuf: 4194304, wmemQueued: 67359 },
  );
  auto.wqueue = 65695;
  const cwnd = tcp(
    39121,
    47021,
    { ...base, unacked: 26, busyTime: 1e6, bytesAcked: 1e6 },
    { sndbuf: 65536, wmemQueued: 70000 },
  );
  cwnd.wqueue = 65536;
  const idle = tcp(
    39122,
    47021,
    { ...base, busyTime: 1e6, bytesAcked: 1e6 },
    { sndbuf: 32768, wmemQueued: 0 },
  );
  const a = [auto, cwnd, idle];
  const b = [
    pair(auto, { busyTime: 1_716_000, bytesAcked: 1.46e9 })[1],
    pair(cwnd, { busyTime: 2e6, bytesAcked: 2e6 })[1],
    pair(idle, { busyTime: 1e6, bytesAcked: 1e6 })[1],
  ];
  for (const row of analyze(snap(b, 1000), HOST_6_18, snap(a, 0)))
    assert.equal(row.limited, false, row.localPort.toString());
});

test('a pinned receive buffer seen from the receiver alone: flagged with the drops in the reason', () => {
  const then = tcp(
    47021,
    58530,
    { rcvWscale: 0, rcvWnd: 16384, rcvRtt: 14, rtt: 15, lastDataRecv: 4, bytesReceived: 1e9 },
    { rcvbuf: 32768, rmemAlloc: 17216, drops: 200 },
  );
  then.remoteHost = '10.0.0.2';
  then.rqueue = 16384;
  const [, now] = pair(then, { bytesReceived: 1e9 + 280739840 }, {}, { drops: 303 });
  const [row] = analyze(snap([now], 1000), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    row.flags.map((f) => f.kind),
    ['pinned-rcvbuf'],
  );
  assert.match(row.flags[0].reason, /receive buffer 32 KiB.*window scale 0 where autotuning offers 10/);
  assert.match(row.flags[0].reason, /SO_RCVBUF was set/);
  assert.match(row.flags[0].reason, /it is receiving: 16\.8 KiB of it queued, 103 packets dropped on it/);
  // the same socket receiving nothing since the previous sample is not flagged
  const [quiet] = analyze(snap([then], 1000), HOST_6_18, snap([then], 0));
  assert.equal(quiet.limited, false);
});

test("a pinned receive buffer on a socket that mostly sends (a broker to its consumer) is not its sender's limit", () => {
  // the lab drain's broker → consumer socket at 128K/224K: bulk out, acks in, one packet dropped;
  // its own queue and the consumer's think time inflate both RTT estimates, so neither the drop nor
  // rate × RTT says anything of the window
  const then = tcp(
    5672,
    40100,
    {
      rcvWscale: 0,
      rcvWnd: 65536,
      rcvRtt: 80_000,
      rtt: 40_000,
      lastDataRecv: 4,
      bytesReceived: 1e6,
      bytesAcked: 1e9,
    },
    { rcvbuf: 131072, rmemAlloc: 0, drops: 0 },
  );
  const [, now] = pair(then, { bytesReceived: 1e6 + 300_000, bytesAcked: 1e9 + 100e6 }, {}, { drops: 1 });
  const [row] = analyze(snap([now], 1000), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    row.flags.map((f) => f.kind),
    [],
  );
  // the same socket receiving as much as it sends keeps the rate evidence
  const [, busy] = pair(then, { bytesReceived: 1e6 + 300_000, bytesAcked: 1e9 + 200_000 });
  const [both] = analyze(snap([busy], 1000), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    both.flags.map((f) => f.kind),
    ['pinned-rcvbuf'],
  );
  assert.match(both.flags[0].reason, /arrive, ≈ the window/);
});

test('a stalled autotuned reader and its sender: stalled-reader at both ends', () => {
  const receiver = tcp(
    47001,
    51494,
    { rcvWnd: 0, lastDataRecv: 4668, bytesReceived: 127973 },
    { rcvbuf: 131072, rmemAlloc: 130469, drops: 5 },
  );
  receiver.rqueue = 127973;
  const sender = tcp(
    51494,
    47001,
    { sndWnd: 0, backoff: 4, lastDataSent: 4660, ...busy(99.9) },
    { sndbuf: 4194304, wmemQueued: 2804699 },
  );
  sender.wqueue = 2755611;
  const [r, s] = analyze(snap([receiver, sender], 1000), HOST_6_18, snap([receiver, sender], 0));
  assert.deepEqual(
    r.flags.map((f) => f.kind),
    ['stalled-reader'],
  );
  assert.match(r.flags[0].reason, /125 KiB wait in its receive queue .*zero window.*4\.7 s.*stopped reading/);
  assert.deepEqual(
    s.flags.map((f) => f.kind),
    ['stalled-reader'],
  );
  assert.match(s.flags[0].reason, /its reader 127\.0\.0\.1:47001 on this host stopped reading/);
  // the sender alone (its reader on another host): told by the zero window it probes
  const remote = { ...sender, remoteHost: '10.0.0.2' };
  const [alone] = analyze(snap([remote]), HOST_6_18);
  assert.match(alone.flags[0]?.reason ?? '', /peer's receive window is zero with 2\.63 MiB waiting/);
  assert.equal(alone.flags[0].kind, 'stalled-reader');
});

test('a stalled pinned reader is stalled, and neither end is told to remove its setsockopt', () => {
  const receiver = tcp(
    47001,
    49970,
    { rcvWscale: 0, rcvWnd: 0, lastDataRecv: 4504, bytesReceived: 24576 },
    { rcvbuf: 32768, rmemAlloc: 27072, drops: 5 },
  );
  receiver.rqueue = 24576;
  const sender = tcp(
    49970,
    47001,
    { sndWscale: 0, sndWnd: 0, backoff: 4, lastDataSent: 4496, ...busy(100) },
    { sndbuf: 4194304, wmemQueued: 2855616 },
  );
  sender.wqueue = 2596864;
  const rows = analyze(snap([receiver, sender]), HOST_6_18);
  for (const row of rows) {
    assert.deepEqual(
      row.flags.map((f) => f.kind),
      ['stalled-reader'],
    );
    assert.doesNotMatch(row.flags[0].reason, /remove/);
  }
  assert.match(
    rows[0].flags[0].reason,
    /pinned too, but that is not the cause; 5 packets dropped since it opened/,
  );
});

test('the real broker between an ACK and its next write: queue empty at the instant, still pinned-sndbuf below two segments', () => {
  // beam.smp → consumer, sampled 1.5 s apart (tcp_listen_options.sndbuf = 16384, loopback)
  const info = { rtt: 34679, minRtt: 3, unacked: 0, sndCwnd: 18, sndWnd: 1414144, lastDataSent: 48 };
  const then = tcp(
    5672,
    42860,
    { ...info, busyTime: 452000, bytesAcked: 1376432 },
    { sndbuf: 32768, wmemQueued: 66315 },
  );
  then.remoteHost = '10.0.0.9';
  const [, now] = pair(then, { busyTime: 1696000, bytesAcked: 3668337 }, { wqueue: 0 }, { wmemQueued: 0 });
  const [row] = analyze(snap([now], 1500), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    row.flags.map((f) => f.kind),
    ['pinned-sndbuf'],
  );
  assert.match(
    row.flags[0].reason,
    /send buffer 32 KiB, far below tcp_wmem max 4 MiB, busy with less in flight/,
  );
  // the same socket with an MTU-sized mss (two segments fit): an empty queue is no evidence
  const wan = { ...now, tcpInfo: { ...now.tcpInfo, sndMss: 1448 } as TcpInfo };
  const [r2] = analyze(snap([wan], 1500), HOST_6_18, snap([then], 0));
  assert.equal(r2.limited, false);
});

test('FlagMemory holds a flag for up to 3 samples while the socket moves data, marked (held); an idle socket loses it', () => {
  const memory = new FlagMemory();
  const row = (flagged: boolean, moving = true): InspectedSocket => ({
    protocol: 'tcp',
    family: 4,
    state: 'established',
    role: 'accepted',
    localAddress: '127.0.0.1',
    localPort: 5672,
    remoteAddress: '127.0.0.1',
    remotePort: 40000,
    inode: 1,
    cookie: 'c1',
    sentBytesPerSecond: moving ? 1e5 : 0,
    limited: flagged,
    flags: flagged ? [{ kind: 'pinned-sndbuf', reason: 'send buffer 32 KiB' }] : [],
  });
  const seen: string[] = [];
  for (const flagged of [true, false, false, false, false, true, false]) {
    const rows = [row(flagged)];
    memory.apply(rows);
    seen.push(rows[0].flags.map((f) => f.reason).join() || '-');
  }
  assert.deepEqual(seen, [
    'send buffer 32 KiB',
    '(held) send buffer 32 KiB',
    '(held) send buffer 32 KiB',
    '(held) send buffer 32 KiB',
    '-',
    'send buffer 32 KiB',
    '(held) send buffer 32 KiB',
  ]);
  const idle = [row(false, false)];
  memory.apply(idle);
  assert.equal(idle[0].limited, false, 'a socket that moved nothing loses the flag at once');
});

test('a pinned sender of bursts (busy 10 % of the interval) with its queue at the limit now, or at it over the busy time: pinned-sndbuf; neither: not', () => {
  // issue 44: 1 MiB every 3 s through SO_SNDBUF 2 KiB (tb 4.5 KiB) across 40 ms is busy ~0.45 s a
  // burst, never the half of a 2 s interval the rule asked for
  const then = tcp(
    53870,
    5399,
    {
      rtt: 41000,
      minRtt: 40300,
      unacked: 3,
      sndCwnd: 56,
      sndWnd: 572416,
      busyTime: 1e6,
      bytesAcked: 1e6,
      lastDataSent: 5,
    },
    { sndbuf: 4608, wmemQueued: 4608 },
  );
  then.remoteHost = '10.201.0.2';
  then.wqueue = 4344;
  const [, now] = pair(then, { busyTime: 1_200_000, bytesAcked: 1_020_000 });
  now.wqueue = 4344;
  const [row] = analyze(snap([now], 2000), HOST_6_18, snap([then], 0));
  assert.deepEqual(
    row.flags.map((f) => f.kind),
    ['pinned-sndbuf'],
  );
  assert.equal(row.busyRatio, 0.1);
  // its queue empty at the sample: found by what the interval accumulated (20 KB acknowledged in
  // 200 ms busy ≈ 3.9 KiB a 40 ms round trip, at tb 4.5 KiB; test/observe/tcp-rules-burst.test.ts)
  const empty = { ...now, wqueue: 0, skmem: { ...now.skmem, wmemQueued: 0 } } as typeof now;
  const [quiet] = analyze(snap([empty], 2000), HOST_6_18, snap([then], 0));
  assert.match(quiet.flags[0]?.reason ?? '', /at the limit while busy/);
  // the same empty queue after an interval that moved a tenth of that: not found (FlagMemory holds it)
  const little = { ...empty, tcpInfo: { ...empty.tcpInfo, bytesAcked: 1_002_000 } } as typeof now;
  const [idle] = analyze(snap([little], 2000), HOST_6_18, snap([then], 0));
  assert.equal(idle.limited, false, 'between bursts the rule does not find it (FlagMemory holds it)');
});
