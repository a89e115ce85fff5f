// The delay line's thread: moves packets from one tun fd to another after their due time. One
// thread can serve both directions of a link or just one. Timing through ppoll(2) with a
// nanosecond timeout and a 1 ns timer slack (JavaScript timers tick in milliseconds).
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { EINTR } from '../sys/constants.js';
import { errno, fn, setThreadNice, setTimerSlack, timespec } from '../sys/libc.js';
import { SysError } from '../sys/sys-error.js';
import { VNET_HDR_LEN } from '../sys/tun.js';
import { LinkClock, type LinkParams, PacketRing, STAT, superPacketLoss } from './link.js';

export interface DirectionSpec {
  inFd: number;
  outFd: number;
  link: LinkParams;
  ringBytes: number;
  /** Float64Array over a SharedArrayBuffer: see STAT (link.ts). */
  stats: SharedArrayBuffer;
}

export interface WorkerSpec {
  dirs: DirectionSpec[];
  /** Int32Array[0] over it: 1 = stop. */
  stop: SharedArrayBuffer;
  /** Nice value of the thread (default DELAY_LINE_NICE); 0 keeps the process's. */
  nice?: number;
}

/** Largest packet a tun hands over: a 64 KiB GSO packet plus its virtio_net_hdr, with room to spare. */
const MAX_PACKET = 65536 + VNET_HDR_LEN + 256;
const POLLIN = 1;
/**
 * The nice value of a delay-line thread. A link does not wait for CPU; on a busy host a thread that
 * does stretches the round-trip time and starves TCP small queues, so it asks for a little priority
 * (as root; best effort). It blocks in ppoll between packets, so it takes no more than it needs.
 */
export const DELAY_LINE_NICE = -10;

function run(spec: WorkerSpec): void {
  const read = fn('read');
  const write = fn('write');
  const ppoll = fn('ppoll');
  setTimerSlack(1);
  setThreadNice(spec.nice ?? DELAY_LINE_NICE);
  const stop = new Int32Array(spec.stop);
  const dirs = spec.dirs.map((d) => ({
    ...d,
    clock: new LinkClock(d.link),
    ring: new PacketRing(d.ringBytes, MAX_PACKET),
    st: new Float64Array(d.stats),
  }));
  const n = dirs.length;
  const pfds = Buffer.alloc(8 * n);
  dirs.forEach((d, i) => {
    pfds.writeInt32LE(d.inFd, i * 8);
    pfds.writeInt16LE(POLLIN, i * 8 + 4);
  });
  const ts = Buffer.alloc(16);
  const scratch = new Uint8Array(MAX_PACKET);
  parentPort?.postMessage('ready');
  while (Atomics.load(stop, 0) === 0) {
    let now = performance.now();
    let next = now + 20;
    for (const d of dirs) {
      while (d.ring.nextDue() <= now) {
        const pkt = d.ring.peek();
        if (write(d.outFd, pkt, pkt.length) < 0) d.st[STAT.writeErrors]++;
        else {
          d.st[STAT.packetsOut]++;
          d.st[STAT.bytesOut] += pkt.length - VNET_HDR_LEN;
        }
        d.ring.shift();
      }
      next = Math.min(next, d.ring.nextDue());
    }
    const waitNs = Math.max(0, Math.round((next - now) * 1e6));
    timespec(waitNs, ts);
    for (let i = 0; i < n; i++) pfds.writeInt16LE(0, i * 8 + 6);
    const ready = ppoll(pfds, n, ts, null);
    // a failed wait other than a signal's would spin: the thread ends with the errno (delayline.ts
    // hands it to the lab's close())
    const failed = ready < 0 ? errno() : 0;
    if (failed !== 0 && failed !== EINTR) throw new SysError('ppoll', failed);
    if (ready <= 0) continue;
    now = performance.now();
    for (let i = 0; i < n; i++) {
      if (pfds.readInt16LE(i * 8 + 6) === 0) continue;
      const d = dirs[i];
      // Drain what is there now, up to a bound so the other direction is not starved.
      for (let k = 0; k < 256; k++) {
        const off = d.ring.reserve();
        const buf = off < 0 ? scratch : d.ring.bytes.subarray(off, off + MAX_PACKET);
        const got = Number(read(d.inFd, buf, MAX_PACKET));
        if (got <= 0) break;
        const h = buf;
        const gsoType = h[1] & 0x7f;
        const hdrLen = h[2] | (h[3] << 8);
        const gsoSize = h[4] | (h[5] << 8);
        const payload = got - VNET_HDR_LEN;
        const segs = gsoType && gsoSize ? Math.max(1, Math.ceil((payload - hdrLen) / gsoSize)) : 1;
        d.st[STAT.packetsIn]++;
        d.st[STAT.bytesIn] += payload;
        if (segs > 1) d.st[STAT.gsoPackets]++;
        if (segs > d.st[STAT.maxSegments]) d.st[STAT.maxSegments] = segs;
        if (off < 0) {
          d.st[STAT.queueDrops]++;
          continue;
        }
        if (d.link.loss > 0 && Math.random() < superPacketLoss(d.link.loss, segs)) {
          d.st[STAT.lost]++;
          continue;
        }
        const due = d.clock.admit(now, payload + (segs - 1) * hdrLen);
        if (due < 0) {
          d.st[STAT.queueDrops]++;
          continue;
        }
        d.ring.push(off, got, due);
      }
    }
  }
}

// this module is also imported for its constants (delayline.ts): it runs only as the delay line's own
// worker, not in any worker that happens to import sockbuf
if (parentPort && Array.isArray((workerData as Partial<WorkerSpec> | null)?.dirs)) {
  run(workerData as WorkerSpec);
}
