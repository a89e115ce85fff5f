// The user-space delay line: packets read from one tun device are held for the one-way delay (and
// serialised at the rate cap, and maybe lost) and written to the other tun device. GSO super-packets
// pass through with their virtio_net_hdr untouched, so the kernels at both ends see 64 KiB TSO/GRO
// packets whatever the MTU. The packet moving runs in worker threads (one per direction by default).
import { OPTIONS } from '../policy/option-registry.js';
import { SockbufError } from '../sys/sockbuf-error.js';
import type { TunDevice } from '../sys/tun.js';
import { spawnWorker, workerFailure } from '../sys/worker.js';
import type { DirectionSpec } from './delayline.worker.js';
import { defaultLimitBytes, type LinkParams, STAT } from './link.js';

export interface DelayLineOptions {
  rttMs: number;
  /** Rate cap in bit/s each way; 0 = none. */
  bitsPerSecond?: number;
  /** Loss probability per segment each way, 0…1. */
  loss?: number;
  /** Bottleneck queue limit in bytes (default: one bandwidth-delay product, at least 256 KiB). */
  limitBytes?: number;
  /** Worker threads: 2 = one per direction (default), 1 = one for both. */
  threads?: 1 | 2;
}

export interface DirectionStats {
  packetsIn: number;
  bytesIn: number;
  packetsOut: number;
  bytesOut: number;
  lost: number;
  queueDrops: number;
  gsoPackets: number;
  maxSegments: number;
  writeErrors: number;
}

export interface DelayLine {
  readonly mode: string;
  /** Client → server, server → client. */
  stats(): { forward: DirectionStats; reverse: DirectionStats };
  /**
   * Stops the threads and waits for them; rejects, once they are stopped, with the first failure of a
   * thread (a SysError with its errno, or ERR_SOCKBUF_WORKER).
   */
  stop(): Promise<void>;
}

/** The largest delay-line ring: a typed array past 4 GiB is refused (a 2 s RTT at 40 Gbit/s asked 5 GB). */
const MAX_RING_BYTES = 2 ** 31;

/**
 * What can be in flight on the line: the queue limit plus one delay's worth at the cap (or at
 * 40 Gbit/s without one), at least 8 MiB and at most MAX_RING_BYTES (a packet that finds the ring
 * full is dropped and counted, as at the queue limit). @internal (exported for its test)
 */
export function ringBytes(link: LinkParams): number {
  const rate = link.bitsPerSecond || 40e9;
  const wanted = Math.ceil(link.limitBytes + ((rate / 8) * link.delayMs) / 1000) + (1 << 20);
  return Math.min(MAX_RING_BYTES, Math.max(8 << 20, wanted));
}

export async function startDelayLine(
  client: TunDevice,
  server: TunDevice,
  opts: DelayLineOptions,
): Promise<DelayLine> {
  const bitsPerSecond = opts.bitsPerSecond ?? 0;
  const link: LinkParams = {
    delayMs: opts.rttMs / 2,
    bitsPerSecond,
    loss: opts.loss ?? 0,
    limitBytes: opts.limitBytes ?? defaultLimitBytes(bitsPerSecond, opts.rttMs),
  };
  const mk = (inFd: number, outFd: number): DirectionSpec => ({
    inFd,
    outFd,
    link,
    ringBytes: ringBytes(link),
    stats: new SharedArrayBuffer(STAT.size * 8),
  });
  const fwd = mk(client.fd, server.fd);
  const rev = mk(server.fd, client.fd);
  const stop = new SharedArrayBuffer(4);
  const threads = opts.threads ?? OPTIONS.threads.default;
  const groups = threads === 1 ? [[fwd, rev]] : [[fwd], [rev]];
  const workers = groups.map((dirs) =>
    spawnWorker(new URL('./delayline.worker', import.meta.url), { workerData: { dirs, stop } }),
  );
  const failures: SockbufError[] = [];
  const done = workers.map(
    (w) =>
      new Promise<void>((resolve) => {
        w.once('error', (e) => failures.push(workerFailure('delay line thread', e)));
        w.once('exit', () => resolve());
      }),
  );
  const ready = workers.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        w.once('message', () => resolve());
        w.once('exit', () =>
          reject(failures[0] ?? new SockbufError('delay line thread exited at start', 'ERR_SOCKBUF_WORKER')),
        );
      }),
  );
  const stopAll = async () => {
    Atomics.store(new Int32Array(stop), 0, 1);
    await Promise.all(done);
  };
  try {
    await Promise.all(ready);
  } catch (err) {
    await stopAll();
    throw err;
  }
  const stopped = async () => {
    await stopAll();
    if (failures.length) throw failures[0];
  };
  const read = (sab: SharedArrayBuffer): DirectionStats => {
    const a = new Float64Array(sab);
    const o = {} as Record<string, number>;
    for (const [k, i] of Object.entries(STAT)) if (k !== 'size') o[k] = a[i];
    return o as unknown as DirectionStats;
  };
  const mode = `userspace-tun, GSO passthrough ${client.gso && server.gso ? 'on' : 'off'}, ${threads} thread${threads > 1 ? 's' : ''}`;
  return {
    mode,
    stats: () => ({ forward: read(fwd.stats), reverse: read(rev.stats) }),
    stop: stopped,
  };
}
