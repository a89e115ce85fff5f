// One receiving end (`sockbuf sink udp`): a receiver (batch or node:dgram), the sequence tracker over
// every datagram, interval reports, and the stop rules (--duration, --idle after the first arrival,
// or an abort). Loss comes from the sequence numbers; with GRO the kernel's drop counter counts
// coalesced messages, not datagrams, and the result says so.

import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { durationMs } from '../policy/units.js';
import { createDgramReceiver } from '../udp/node-dgram-baseline.js';
import { createUdpReceiver, type UdpBatch, type UdpReceiverOptions } from '../udp/receiver.js';
import { farEndFromEnv } from './far-end-limits.js';
import { account, type UdpSinkResult } from './udp-sink-result.js';
import { SequenceTracker } from './udp-tracker.js';
import { warmUp } from './udp-warm-up.js';

export type { UdpSinkResult } from './udp-sink-result.js';

/** What runUdpSink takes: where it listens, the receiver (batch or node:dgram) and when to stop. */
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

/** What the sink counts while it receives: the tracker over every datagram and when they came. */
class Tally {
  trailers = 0;
  /** First and last datagram handed over, µs since the epoch (0: none yet). */
  first = 0;
  last = 0;
  foreign = 0;
  constructor(public tracker: SequenceTracker) {}
  seen(t: number): void {
    if (!this.first) this.first = t;
    this.last = t;
  }
  /** Counts from zero again with `tracker` (after the warm-up). */
  reset(tracker: SequenceTracker): void {
    Object.assign(this, { tracker, trailers: 0, first: 0, last: 0, foreign: 0 });
  }
}

type SinkStats = {
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

/** One receiver as the sink drives it, whichever kind. */
interface Receiving {
  stats: () => SinkStats;
  resetStats: () => void;
  /** Stops reading, hands out what was taken, closes. */
  close: () => Promise<void>;
  /** Set when the receiver failed (its reader thread died): the sink stops and throws it. */
  failed?: Error;
  ready: { host: string; port: number; gro: boolean; rcvbuf: number };
}

/** Opens the receiver (node:dgram or the batch receiver, reading from now on) feeding `tally`. */
async function openReceiver(
  o: UdpSinkOptions,
  kind: 'batch' | 'dgram',
  peer: string | undefined,
  tally: Tally,
): Promise<Receiving> {
  if (kind === 'dgram') {
    const r = await createDgramReceiver({
      listen: o.listen,
      rcvbuf: o.rcvbuf,
      onMessage: (msg, recvUs, from) => {
        if (peer !== undefined && plainHost(from) !== peer) {
          tally.foreign++;
          return;
        }
        tally.seen(recvUs);
        const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
        tally.trailers += tally.tracker.recordDatagram(v, 0, msg.length, recvUs);
      },
    });
    return {
      stats: r.stats,
      resetStats: r.resetStats,
      close: r.close,
      ready: { host: r.host, port: r.port, gro: false, rcvbuf: r.stats().rcvbuf },
    };
  }
  // the sink stops on its signal itself (stop, hand out what was taken, then close): the receiver
  // does not close on it
  const r = await createUdpReceiver({ ...o, signal: undefined, addresses: peer !== undefined });
  // read from now on (the warm-up's datagrams must reach the reader)
  await r.start();
  const foreign = { n: 0 };
  const done = (async () => {
    for await (const b of r) {
      tally.seen(b.timesUs[b.count - 1]);
      foreign.n = 0;
      tally.trailers += recordBatch(tally.tracker, b, peer, foreign);
      tally.foreign += foreign.n;
    }
  })();
  const receiving: Receiving = {
    stats: () => r.stats(),
    resetStats: () => r.resetStats(),
    close: async () => {
      await r.stop();
      await done.catch(() => {});
      await r.close();
    },
    ready: { host: r.host, port: r.port, gro: r.gro, rcvbuf: r.stats().rcvbuf },
  };
  done.catch((err: Error) => {
    receiving.failed = err;
  });
  return receiving;
}

/** The stop rules, checked every 50 ms, and the interval reports on their own clock; resolves to why a far end stopped, if it did. */
function untilStop(
  o: UdpSinkOptions & { farEnd?: { maxBytes: number; maxSeconds: number } },
  rx: Receiving,
  tally: Tally,
  hooks: UdpSinkHooks,
): Promise<string | undefined> {
  const ms = (v: number | string | undefined, name: string) =>
    v === undefined ? undefined : durationMs(v, name);
  const durationMsOpt =
    o.duration === undefined ? undefined : checkOption('sinkDuration', o.duration, 'duration');
  const idleMs = o.idle === undefined ? undefined : checkOption('idle', o.idle);
  const every = ms(o.interval, 'interval') ?? 1000;
  const t0 = performance.now();
  // --idle counts any arrival as activity: a datagram handed over (`tally.last`), or one the counters
  // saw arrive without a batch (truncated, dropped in userspace or by the kernel, a foreign sender's)
  const arrivals = () => {
    const s = rx.stats();
    return s.received + (s.truncated ?? 0) + (s.userspaceDrops ?? 0) + s.kernelDrops + tally.foreign;
  };
  // the counters start from zero here (reset after the warm-up), so anything counted is an arrival:
  // one that came between the ready line and this first look counts too
  let arrived = 0;
  let activeUs = 0;
  const idleFor = (at: number) => {
    const n = arrivals();
    if (n !== arrived) {
      arrived = n;
      activeUs = at;
    }
    const lastUs = Math.max(activeUs, tally.last);
    return lastUs > 0 ? at - lastUs : 0;
  };
  let stopped: string | undefined;
  let lastReport = t0;
  let lastReceived = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now();
      if (hooks.onInterval && now - lastReport >= every) {
        const s = rx.stats();
        const datagramsPerSecond = ((s.received - lastReceived) * 1e3) / (now - lastReport);
        hooks.onInterval({
          seconds: (now - t0) / 1e3,
          received: s.received,
          datagramsPerSecond,
          kernelDrops: s.kernelDrops,
          userspaceDrops: s.userspaceDrops ?? 0,
        });
        lastReport = now;
        lastReceived = s.received;
      }
      const far = o.farEnd;
      if (far && !stopped) {
        if (rx.stats().bytes > far.maxBytes) stopped = `max-bytes: more than ${far.maxBytes} bytes received`;
        else if (now - t0 >= far.maxSeconds * 1e3) stopped = `seconds: the test ran past ${far.maxSeconds} s`;
      }
      const stop =
        stopped !== undefined ||
        rx.failed !== undefined ||
        o.signal?.aborted ||
        (durationMsOpt !== undefined && now - t0 >= durationMsOpt) ||
        (idleMs !== undefined && idleFor((performance.timeOrigin + now) * 1e3) >= idleMs * 1e3);
      if (stop) {
        clearInterval(timer);
        resolve(stopped);
      }
    }, 50);
    o.signal?.addEventListener('abort', () => {
      clearInterval(timer);
      resolve(stopped);
    });
  });
}

/**
 * Receives until a stop rule fires; resolves to the totals. Rejects when the receiver fails (its reader
 * thread died): a sink that can no longer receive must not wait for datagrams forever.
 */
export async function runUdpSink(given: UdpSinkOptions, hooks: UdpSinkHooks = {}): Promise<UdpSinkResult> {
  const o = { ...given, farEnd: given.farEnd === 'env' ? farEndFromEnv() : given.farEnd };
  const warmUpMs = checkOption('warmUp', o.warmUp ?? OPTIONS.warmUp.default);
  if (o.duration !== undefined) checkOption('sinkDuration', o.duration, 'duration');
  if (o.idle !== undefined) checkOption('idle', o.idle);
  if (o.interval !== undefined) durationMs(o.interval, 'interval');
  // the batch receiver checks these itself; node:dgram ignores them, yet they must still make sense
  if (o.receiver === 'dgram') {
    checkWhole('sockets', o.sockets ?? OPTIONS.sockets.default);
    checkWhole('batch', o.batch ?? OPTIONS.batch.default);
  }
  const real = new SequenceTracker();
  // the warm-up's datagrams go to a tracker that is thrown away
  const tally = new Tally(warmUpMs === 0 ? real : new SequenceTracker());
  const peer = o.farEnd?.peer;
  const kind = o.receiver ?? OPTIONS.receiver.default;
  const rx = await openReceiver(o, kind, peer, tally);
  const { ready } = rx;
  if (tally.tracker !== real) {
    // taken from the kernel: handed over, or in the ring
    const queued = () => rx.stats().queued ?? 0;
    await warmUp(
      ready.host,
      ready.port,
      ready.gro,
      warmUpMs / 1000,
      ready.rcvbuf,
      () => rx.stats().received + queued(),
      queued,
    );
    rx.resetStats();
    tally.reset(real);
  }
  hooks.onReady?.({ ...ready, receiver: kind });
  const cpu0 = process.cpuUsage();
  const stopped = await untilStop(o, rx, tally, hooks);
  await rx.close();
  if (rx.failed) throw rx.failed;
  const cpu = process.cpuUsage(cpu0);
  const s = rx.stats();
  const rep = tally.tracker.report();
  const { first, last, trailers, foreign } = tally;
  const seconds = first && last > first ? (last - first) / 1e6 : 0;
  // foreign datagrams were taken from the kernel but belong to no flow of the test
  const data = s.received - trailers - foreign;
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
    lastReceivedAtMs: tally.tracker.lastDataUs ? tally.tracker.lastDataUs / 1000 : null,
    sent: rep.sent,
    unsequenced: tally.tracker.unsequenced,
    flows: rep.flows,
    trailers: rep.trailers,
    accounting: account(ready.gro, rep, { ...s, received: s.received - foreign }),
    seconds,
    datagramsPerSecond: seconds ? data / seconds : 0,
    jsCallsPerDatagram: s.jsCallsPerDatagram,
    recvCalls: s.readerCalls ?? s.received,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    cpuUsPerDatagram: data ? (cpu.user + cpu.system) / data : 0,
    rcvbuf: s.rcvbuf,
    hostRcvbufErrors: s.hostRcvbufErrors,
    gro: ready.gro,
    sockets: kind === 'dgram' ? 1 : (o.sockets ?? OPTIONS.sockets.default),
    ...(peer !== undefined ? { foreign } : {}),
    ...(stopped ? { stopped } : {}),
  };
}
