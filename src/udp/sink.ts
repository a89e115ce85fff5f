// One receiving end (`sockbuf sink udp`): a receiver (batch or node:dgram), the sequence tracker over
// every datagram, interval reports, and the stop rules (--duration, --idle after the first datagram,
// or an abort). Loss comes from the sequence numbers; with GRO the kernel's drop counter counts
// coalesced messages, not datagrams, and the result says so.
import { parseListen } from '../policy/address.js';
import { DATA_MAGIC, HEADER_BYTES, nowUs, TRAILER_MAGIC, writeHeader } from './datagram.js';
import { createDgramReceiver } from './dgram-receiver.js';
import { createUdpReceiver, type UdpBatch, type UdpReceiverOptions } from './receiver.js';
import { SequenceTracker } from './tracker.js';

export interface UdpSinkOptions extends UdpReceiverOptions {
  receiver?: 'batch' | 'dgram';
  /** Stop after this many seconds. */
  duration?: number;
  /** Stop when nothing arrived for this many seconds (counted from the first datagram). */
  idle?: number;
  /** Warm the per-datagram path up before receiving (default true): see warmUp(). */
  warmUp?: boolean;
  /** Seconds between interval reports (default 1). */
  interval?: number;
  signal?: AbortSignal;
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
  /** What the senders' trailers said they sent (null when a trailer did not arrive). */
  sent: number | null;
  unsequenced: number;
  flows: number;
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
  batch?: number;
  slot?: number;
  coalesceSeconds?: number;
}

export interface UdpSinkHooks {
  onReady?: (info: { host: string; port: number; receiver: string; gro: boolean; rcvbuf: number }) => void;
  onInterval?: (i: UdpSinkInterval) => void;
}

/** Records one datagram's header in the tracker; returns 1 for a trailer, else 0. */
function recordDatagram(t: SequenceTracker, v: DataView, off: number, len: number, recvUs: number): number {
  if (len < HEADER_BYTES) {
    t.unsequenced++;
    return 0;
  }
  const magic = v.getUint32(off, true);
  if (magic === DATA_MAGIC)
    t.record(v.getUint32(off + 4, true), v.getFloat64(off + 8, true), v.getFloat64(off + 16, true), recvUs);
  else if (magic === TRAILER_MAGIC) {
    t.recordTrailer(v.getUint32(off + 4, true), v.getFloat64(off + 8, true));
    return 1;
  } else t.unsequenced++;
  return 0;
}

type BatchView = Pick<UdpBatch, 'count' | 'data' | 'offsets' | 'lengths' | 'timesUs'>;

/** Records every datagram of a batch; returns how many were trailers. */
function recordBatch(t: SequenceTracker, b: BatchView): number {
  const v = new DataView(b.data.buffer, b.data.byteOffset, b.data.byteLength);
  let trailers = 0;
  for (let i = 0; i < b.count; i++)
    trailers += recordDatagram(t, v, b.offsets[i], b.lengths[i], b.timesUs[i]);
  return trailers;
}

/**
 * Runs the per-datagram path over made-up batches (into a tracker that is thrown away) until V8 has
 * compiled it, so that the first real second is not spent in the interpreter: at 3 M datagrams/s a
 * cold consumer dropped 1.3 M datagrams in its first second and none afterwards. Like a benchmark's
 * warm-up iterations; nothing of it reaches the results.
 */
export async function warmUp(datagrams = 1 << 20, batch = 4096): Promise<void> {
  const size = HEADER_BYTES;
  const data = Buffer.alloc(batch * size);
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const offsets = new Uint32Array(batch);
  const lengths = new Uint32Array(batch).fill(size);
  const timesUs = new Float64Array(batch);
  const t = new SequenceTracker();
  const now = nowUs();
  for (let seq = 0; seq < datagrams; seq += batch) {
    for (let i = 0; i < batch; i++) {
      offsets[i] = i * size;
      writeHeader(v, i * size, { magic: DATA_MAGIC, flow: 1, seq: seq + i, sendUs: now });
      timesUs[i] = now + 10;
    }
    recordBatch(t, { count: batch, data, offsets, lengths, timesUs });
    // let V8's compiler threads finish what they started (the caller's CPU may be shared)
    if ((seq / batch) % 32 === 31) await new Promise((r) => setTimeout(r, 1));
  }
}

/** Receives until a stop rule fires; resolves to the totals. */
export async function runUdpSink(o: UdpSinkOptions, hooks: UdpSinkHooks = {}): Promise<UdpSinkResult> {
  const tracker = new SequenceTracker();
  let trailers = 0;
  let first = 0;
  let last = 0;
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
    packetsPerBatch?: { mean: number; histogram: Record<string, number> };
  };
  let close: () => Promise<void>;
  let done: Promise<void>;
  let ready: { host: string; port: number; gro: boolean; rcvbuf: number };
  const kind = o.receiver ?? 'batch';
  if (o.warmUp !== false) await warmUp();

  if (kind === 'dgram') {
    const r = await createDgramReceiver({
      listen: o.listen,
      rcvbuf: o.rcvbuf,
      onMessage: (msg, recvUs) => {
        seen(recvUs);
        const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
        trailers += recordDatagram(tracker, v, 0, msg.length, recvUs);
      },
    });
    stats = r.stats;
    close = r.close;
    done = Promise.resolve();
    const listen = typeof o.listen === 'string' ? parseListen(o.listen) : o.listen;
    ready = { host: listen.host, port: r.port, gro: false, rcvbuf: r.stats().rcvbuf };
  } else {
    const r = await createUdpReceiver(o);
    stats = () => r.stats();
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
        trailers += recordBatch(tracker, b);
      }
    })();
  }
  hooks.onReady?.({ ...ready, receiver: kind });
  const cpu0 = process.cpuUsage();

  // The stop rules, checked every 50 ms; interval reports on their own clock.
  const t0 = performance.now();
  const every = (o.interval ?? 1) * 1e3;
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
      const stop =
        o.signal?.aborted ||
        (o.duration !== undefined && now - t0 >= o.duration * 1e3) ||
        (o.idle !== undefined && first > 0 && nowUs - last >= o.idle * 1e6);
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
  const data = s.received - trailers;
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
    sent: rep.sent,
    unsequenced: tracker.unsequenced,
    flows: rep.flows,
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
  };
}
