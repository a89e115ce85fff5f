// One receiving end (`sockbuf sink udp`): a receiver (batch or node:dgram), the sequence tracker over
// every datagram, interval reports, and the stop rules (--duration, --idle after the first arrival,
// or an abort). Loss comes from the sequence numbers; with GRO the kernel's drop counter counts
// coalesced messages, not datagrams, and the result says so.

import { checkWhole } from '../policy/limits.js';
import { durationMs } from '../policy/units.js';
import { createDgramReceiver } from '../udp/dgram-receiver.js';
import { createUdpReceiver, type UdpBatch, type UdpReceiverOptions } from '../udp/receiver.js';
import { farEndFromEnv } from './far-end-limits.js';
import { type SequenceReport, SequenceTracker } from './udp-tracker.js';
import { WARM_UP_SECONDS, warmUp } from './udp-warm-up.js';

export interface UdpSinkOptions extends UdpReceiverOptions {
  receiver?: 'batch' | 'dgram';
  // Durations: milliseconds, or a string with its unit ('1.5s').
  /** Stop after this long. */
  duration?: number | string;
  /** Stop when nothing arrived for this long, counted from the first arrival (any: a datagram handed over, truncated or dropped). */
  idle?: number | string;
  /** How long to send datagrams to itself before ready, to warm the receive path up (default '500ms'; 0: none). */
  warmUp?: number | string;
  /** Time between interval reports (default '1s'). */
  interval?: number | string;
  signal?: AbortSignal;
  /**
   * Set when `serve` started this sink (SOCKBUF_FAR_END): only datagrams from `peer` count (others are
   * `foreign`), and the test is cut, with `stopped` saying why, past `maxBytes` or `maxSeconds`.
   * `'env'`: the limits serve put in this process's environment, if it did (the CLI's sink).
   */
  farEnd?: { peer?: string; maxBytes: number; maxSeconds: number } | 'env';
}

export interface UdpSinkInterval {
  seconds: number;
  received: number;
  datagramsPerSecond: number;
  kernelDrops: number;
  userspaceDrops: number;
}

export interface UdpSinkResult {
  receiver: 'batch' | 'dgram';
  /** Data datagrams received (trailers not counted). */
  received: number;
  bytes: number;
  batches: number;
  packetsPerBatch: { mean: number; histogram: Record<string, number> };
  kernelDrops: number;
  /** 'datagrams', or 'gro-messages' when GRO was on: then a drop may have held up to 64 datagrams. */
  kernelDropsUnit: 'datagrams' | 'gro-messages';
  userspaceDrops: number;
  truncated: number;
  /** From the sequence numbers: sent (per the trailers, else highest + 1) − distinct received. */
  lost: number;
  reordered: number;
  duplicates: number;
  jitterUs: number;
  tailLost: number | null;
  /** When the last datagram arrived, ms since the epoch (null when none did). */
  lastReceivedAtMs: number | null;
  /** What the senders' trailers said they sent (null when a trailer did not arrive). */
  sent: number | null;
  unsequenced: number;
  flows: number;
  /** Trailer datagrams received, and sent as the trailers say (null when a flow's trailers all failed to come). */
  trailers: { sent: number | null; received: number };
  /**
   * Every datagram accounted for: sent = received + kernelDrops + userspaceDrops + truncated, counted
   * in datagrams with the trailers on both sides (`sent`: data and trailer copies sent; `accounted`:
   * every datagram delivered, trailers and unsequenced ones included, plus the drop counters). With
   * GRO the kernel counts a dropped coalesced message once, so the sequence numbers decide (`by`:
   * 'sequence-numbers'; sent = data received + lost). `unaccounted` = sent − accounted: 0 when
   * exact, null when a trailer did not tell what was sent.
   */
  accounting: {
    by: 'counters' | 'sequence-numbers';
    sent: number | null;
    accounted: number;
    unaccounted: number | null;
  };
  /** From the first datagram to the last. */
  seconds: number;
  datagramsPerSecond: number;
  jsCallsPerDatagram: number;
  /** Receive system calls made (recvmmsg for batch; node:dgram makes one recvmsg per datagram). */
  recvCalls: number;
  /** CPU time of the whole receiving process (all threads) while it ran, and per datagram received. */
  cpuSeconds: number;
  cpuUsPerDatagram: number;
  rcvbuf: number;
  hostRcvbufErrors: number;
  gro: boolean;
  sockets: number;
  /** Datagrams from another address than the far end's announced client (not counted anywhere else). */
  foreign?: number;
  /** Why a far end cut the test (one of serve's caps). */
  stopped?: string;
  batch?: number;
  slot?: number;
  coalesceSeconds?: number;
}

export interface UdpSinkHooks {
  onReady?: (info: { host: string; port: number; receiver: string; gro: boolean; rcvbuf: number }) => void;
  onInterval?: (i: UdpSinkInterval) => void;
}

type BatchView = Pick<UdpBatch, 'count' | 'data' | 'offsets' | 'lengths' | 'timesUs' | 'addresses'>;

/** Records every datagram of a batch (from `peer` only, when given); returns how many were trailers. */
function recordBatch(t: SequenceTracker, b: BatchView, peer?: string, foreign?: { n: number }): number {
  const v = new DataView(b.data.buffer, b.data.byteOffset, b.data.byteLength);
  let trailers = 0;
  for (let i = 0; i < b.count; i++) {
    if (peer !== undefined && foreign && plainHost(b.addresses?.[i]?.host) !== peer) {
      foreign.n++;
      continue;
    }
    trailers += t.recordDatagram(v, b.offsets[i], b.lengths[i], b.timesUs[i]);
  }
  return trailers;
}

/** An address as serve's control connection names it (no IPv4-mapped prefix). */
function plainHost(a: string | undefined): string | undefined {
  return a?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/** UdpSinkResult.accounting from the sequence report and the receiver's counters. */
function account(
  gro: boolean,
  rep: SequenceReport,
  s: { received: number; kernelDrops: number; userspaceDrops?: number; truncated?: number },
): UdpSinkResult['accounting'] {
  if (gro) {
    const accounted = rep.unique + rep.lost;
    return {
      by: 'sequence-numbers',
      sent: rep.sent,
      accounted,
      unaccounted: rep.sent === null ? null : rep.sent - accounted,
    };
  }
  const sent = rep.sent === null || rep.trailers.sent === null ? null : rep.sent + rep.trailers.sent;
  const accounted = s.received + s.kernelDrops + (s.userspaceDrops ?? 0) + (s.truncated ?? 0);
  return { by: 'counters', sent, accounted, unaccounted: sent === null ? null : sent - accounted };
}

/** Receives until a stop rule fires; resolves to the totals. */
export async function runUdpSink(given: UdpSinkOptions, hooks: UdpSinkHooks = {}): Promise<UdpSinkResult> {
  const o = { ...given, farEnd: given.farEnd === 'env' ? farEndFromEnv() : given.farEnd };
  const ms = (v: number | string | undefined, name: string) =>
    v === undefined ? undefined : durationMs(v, name);
  const durationMsOpt = ms(o.duration, 'duration');
  const idleMs = ms(o.idle, 'idle');
  const warmUpMs = ms(o.warmUp, 'warmUp') ?? WARM_UP_SECONDS * 1000;
  const every = ms(o.interval, 'interval') ?? 1000;
  // the batch receiver checks these itself; node:dgram ignores them, yet they must still make sense
  if (o.receiver === 'dgram') {
    checkWhole('sockets', o.sockets ?? 1);
    checkWhole('batch', o.batch ?? 64);
  }
  const real = new SequenceTracker();
  // the warm-up's datagrams go to a tracker that is thrown away
  let tracker = warmUpMs === 0 ? real : new SequenceTracker();
  let trailers = 0;
  let first = 0;
  let last = 0;
  const peer = o.farEnd?.peer;
  const foreign = { n: 0 };
  const seen = (t: number) => {
    if (!first) first = t;
    last = t;
  };

  let stats: () => {
    received: number;
    bytes: number;
    batches: number;
    kernelDrops: number;
    userspaceDrops?: number;
    truncated?: number;
    rcvbuf: number;
    hostRcvbufErrors: number;
    jsCallsPerDatagram: number;
    readerCalls?: number;
    queued?: number;
    packetsPerBatch?: { mean: number; histogram: Record<string, number> };
  };
  let close: () => Promise<void>;
  let done: Promise<void>;
  let ready: { host: string; port: number; gro: boolean; rcvbuf: number };
  const kind = o.receiver ?? 'batch';
  let resetStats: () => void;

  if (kind === 'dgram') {
    const r = await createDgramReceiver({
      listen: o.listen,
      rcvbuf: o.rcvbuf,
      onMessage: (msg, recvUs, from) => {
        if (peer !== undefined && plainHost(from) !== peer) {
          foreign.n++;
          return;
        }
        seen(recvUs);
        const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
        trailers += tracker.recordDatagram(v, 0, msg.length, recvUs);
      },
    });
    stats = r.stats;
    resetStats = r.resetStats;
    close = r.close;
    done = Promise.resolve();
    ready = { host: r.host, port: r.port, gro: false, rcvbuf: r.stats().rcvbuf };
  } else {
    // the sink stops on its signal itself (stop, hand out what was taken, then close): the receiver
    // does not close on it
    const r = await createUdpReceiver({ ...o, signal: undefined, addresses: peer !== undefined });
    // read from now on (the warm-up's datagrams must reach the reader)
    await r.start();
    stats = () => r.stats();
    resetStats = () => r.resetStats();
    // Stop reading, hand out what the readers already took, then close.
    close = async () => {
      await r.stop();
      await done;
      await r.close();
    };
    ready = { host: r.host, port: r.port, gro: r.gro, rcvbuf: r.stats().rcvbuf };
    done = (async () => {
      for await (const b of r) {
        seen(b.timesUs[b.count - 1]);
        trailers += recordBatch(tracker, b, peer, foreign);
      }
    })();
  }
  if (tracker !== real) {
    await warmUp(
      ready.host,
      ready.port,
      ready.gro,
      warmUpMs / 1000,
      ready.rcvbuf,
      // taken from the kernel: handed over, or in the ring
      () => stats().received + (stats().queued ?? 0),
      () => stats().queued ?? 0,
    );
    resetStats();
    tracker = real;
    first = 0;
    last = 0;
    trailers = 0;
    foreign.n = 0;
  }
  hooks.onReady?.({ ...ready, receiver: kind });
  const cpu0 = process.cpuUsage();

  // The stop rules, checked every 50 ms; interval reports on their own clock.
  const t0 = performance.now();
  // --idle counts any arrival as activity: a datagram handed over (`last`), or one the counters saw
  // arrive without a batch (truncated, dropped in userspace or by the kernel, a foreign sender's)
  const arrivals = () => {
    const s = stats();
    return s.received + (s.truncated ?? 0) + (s.userspaceDrops ?? 0) + s.kernelDrops + foreign.n;
  };
  let arrived = arrivals();
  let activeUs = 0;
  let stopped: string | undefined;
  let lastReport = t0;
  let lastReceived = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now();
      if (hooks.onInterval && now - lastReport >= every) {
        const s = stats();
        hooks.onInterval({
          seconds: (now - t0) / 1e3,
          received: s.received,
          datagramsPerSecond: ((s.received - lastReceived) * 1e3) / (now - lastReport),
          kernelDrops: s.kernelDrops,
          userspaceDrops: s.userspaceDrops ?? 0,
        });
        lastReport = now;
        lastReceived = s.received;
      }
      const nowUs = (performance.timeOrigin + now) * 1e3;
      const idleFor = (at: number) => {
        const n = arrivals();
        if (n !== arrived) {
          arrived = n;
          activeUs = at;
        }
        const lastUs = Math.max(activeUs, last);
        return lastUs > 0 ? at - lastUs : 0;
      };
      const far = o.farEnd;
      if (far && !stopped) {
        if (stats().bytes > far.maxBytes) stopped = `max-bytes: more than ${far.maxBytes} bytes received`;
        else if (now - t0 >= far.maxSeconds * 1e3) stopped = `seconds: the test ran past ${far.maxSeconds} s`;
      }
      const stop =
        stopped !== undefined ||
        o.signal?.aborted ||
        (durationMsOpt !== undefined && now - t0 >= durationMsOpt) ||
        (idleMs !== undefined && idleFor(nowUs) >= idleMs * 1e3);
      if (stop) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    o.signal?.addEventListener('abort', () => {
      clearInterval(timer);
      resolve();
    });
  });
  await close();
  await done;
  const cpu = process.cpuUsage(cpu0);
  const s = stats();
  const rep = tracker.report();
  const seconds = first && last > first ? (last - first) / 1e6 : 0;
  // foreign datagrams were taken from the kernel but belong to no flow of the test
  const data = s.received - trailers - foreign.n;
  return {
    receiver: kind,
    received: data,
    bytes: s.bytes,
    batches: s.batches,
    packetsPerBatch: s.packetsPerBatch ?? { mean: 1, histogram: { '1': s.received } },
    kernelDrops: s.kernelDrops,
    kernelDropsUnit: ready.gro ? 'gro-messages' : 'datagrams',
    userspaceDrops: s.userspaceDrops ?? 0,
    truncated: s.truncated ?? 0,
    lost: rep.lost,
    reordered: rep.reordered,
    duplicates: rep.duplicates,
    jitterUs: rep.jitterUs,
    tailLost: rep.tailLost,
    // the last data datagram's, not the trailers' that follow it (20 ms apart)
    lastReceivedAtMs: tracker.lastDataUs ? tracker.lastDataUs / 1000 : null,
    sent: rep.sent,
    unsequenced: tracker.unsequenced,
    flows: rep.flows,
    trailers: rep.trailers,
    accounting: account(ready.gro, rep, { ...s, received: s.received - foreign.n }),
    seconds,
    datagramsPerSecond: seconds ? data / seconds : 0,
    jsCallsPerDatagram: s.jsCallsPerDatagram,
    recvCalls: s.readerCalls ?? s.received,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    cpuUsPerDatagram: data ? (cpu.user + cpu.system) / data : 0,
    rcvbuf: s.rcvbuf,
    hostRcvbufErrors: s.hostRcvbufErrors,
    gro: ready.gro,
    sockets: kind === 'dgram' ? 1 : (o.sockets ?? 1),
    ...(peer !== undefined ? { foreign: foreign.n } : {}),
    ...(stopped ? { stopped } : {}),
  };
}
