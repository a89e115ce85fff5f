// Issue 44 item 5, the sender: a pinned sender of bursts is found from the first interval that holds
// a burst, by what accumulated between the two samples (busy time, bytes acknowledged), although its
// queue reads empty at the sample; a pinned sender that is idle, or sends less than half its buffer a
// round trip, and an autotuned one, are not. The figures are those `ss -tinm` read across a 40 ms
// `sockbuf lab` (kernel 6.18): SO_SNDBUF 2048 (tb 4608), mss 1448, 1 MiB every 3 s, each burst busy
// 300-440 ms; the autotuned socket's tb read 46080 before its first byte, 875520 after one burst.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyze, type HostLimits, type Snapshot } from '../../src/observe/analyze.js';
import type { DiagSocket } from '../../src/observe/sockdiag.js';
import { filledWhileBusy } from '../../src/observe/tcp-rules.js';
import { IPPROTO_TCP } from '../../src/sys/constants.js';
import type { MemInfo } from '../../src/sys/meminfo.js';
import type { TcpInfo } from '../../src/sys/tcpinfo.js';

const HOST: HostLimits = { tcpRmemMax: 6 << 20, tcpWmemMax: 4 << 20, rmemMax: 4 << 20 };

/** The lab's sender between bursts: all acknowledged, queue empty, cwnd grown by the last burst. */
function sender(info: Partial<TcpInfo>, sndbuf = 4608): DiagSocket {
  const skmem: MemInfo = {
    rmemAlloc: 0,
    rcvbuf: 131072,
    wmemAlloc: 0,
    sndbuf,
    fwdAlloc: 0,
    wmemQueued: 0,
    optmem: 0,
    drops: 0,
  };
  return {
    family: 4,
    protocol: IPPROTO_TCP,
    state: 1,
    stateName: 'established',
    localHost: '10.201.0.1',
    localPort: 53870,
    remoteHost: '10.201.0.2',
    remotePort: 5399,
    ifindex: 0,
    cookie: '7',
    rqueue: 0,
    wqueue: 0,
    uid: 0,
    inode: 4242,
    tcpInfo: {
      rtt: 41187,
      minRtt: 40615,
      sndMss: 1448,
      sndCwnd: 324,
      unacked: 0,
      sndWnd: 572416,
      rcvWscale: 7,
      sndWscale: 7,
      lastDataSent: 900,
      busyTime: 548_000,
      bytesAcked: 1_048_577,
      rwndLimited: 0,
      sndbufLimited: 0,
      ...info,
    } as TcpInfo,
    skmem,
  };
}

const snap = (s: DiagSocket, atMs: number): Snapshot => ({ atMs, sockets: [s] });
/** The flags of `now` judged over the 2 s since `then`. */
const kinds = (then: DiagSocket, now: DiagSocket) =>
  analyze(snap(now, 2000), HOST, snap(then, 0))[0].flags.map((f) => f.kind);

const before = sender({});
// one burst in the interval: busy 440 ms, 1 MiB acknowledged, queue empty again at the sample
const burst = { busyTime: 548_000 + 440_000, bytesAcked: 1_048_577 + 1_048_576 };

test('a pinned sender of bursts, its queue empty at the sample: pinned-sndbuf on the first interval holding a burst', () => {
  const now = sender(burst);
  assert.deepEqual(kinds(before, now), ['pinned-sndbuf']);
  const [row] = analyze(snap(now, 2000), HOST, snap(before, 0));
  assert.match(
    row.flags[0].reason,
    /send buffer 4\.5 KiB, far below tcp_wmem max 4 MiB, at the limit while busy, ≈ 94\.\d KiB in flight a round trip over 440 ms busy \(1 MiB acknowledged\)/,
  );
  // the kernel's sndbuf_limited stayed 0 over this burst (as over the first two measured): not needed
  assert.equal(row.sndbufLimitedPct, 0);
  // the same interval judged with a first-scrape view (no previous sample) is not an interval finding
  assert.equal(filledWhileBusy({ s: now }, HOST.tcpWmemMax), undefined);
});

test('a pinned sender that is idle over the interval, or sends less than half its buffer a round trip, is not flagged', () => {
  // idle: nothing acknowledged, no busy time, between bursts or never sending
  assert.deepEqual(kinds(before, sender({})), []);
  // busy 800 ms with 1 KiB messages: ≈ 1 KiB in flight a round trip, under half of tb 4608
  assert.deepEqual(
    kinds(before, sender({ busyTime: 548_000 + 800_000, bytesAcked: 1_048_577 + 20_480 })),
    [],
  );
  // busy but nothing acknowledged (a stalled peer is another rule's)
  assert.deepEqual(kinds(before, sender({ busyTime: 548_000 + 800_000 })), []);
});

test('the same burst is not pinned-sndbuf when the buffer is autotuned, the peer window or cwnd is the limit', () => {
  // autotuned: tb 46080 before its first byte (2 × 10 segments), 875520 after one burst
  assert.deepEqual(kinds(sender({}, 46080), sender(burst, 46080)), []);
  assert.deepEqual(kinds(sender({}, 875520), sender(burst, 875520)), []);
  // the peer's window limited most of the busy time
  assert.deepEqual(kinds(before, sender({ ...burst, rwndLimited: 300_000 })), []);
  // a peer window or a cwnd that holds no more than the buffer
  assert.deepEqual(kinds(before, sender({ ...burst, sndWnd: 4096 })), []);
  assert.deepEqual(kinds(before, sender({ ...burst, sndCwnd: 3 })), []);
});
