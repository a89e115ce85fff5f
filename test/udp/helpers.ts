// Shared by the UDP tests: consume a receiver into a SequenceTracker, and small waits.
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { DATA_MAGIC, type DatagramHeader, readHeader } from '../../src/ends/udp-header.js';
import { SequenceTracker } from '../../src/ends/udp-tracker.js';
import type { UdpBatch, UdpReceiver } from '../../src/udp/receiver.js';

export interface Consumed {
  tracker: SequenceTracker;
  batches: number;
  /** (flow, seq, length) of every datagram, in arrival order. */
  seen: string[];
}

/** Reads batches until the receiver closes; `each` may delay (a slow consumer). */
export function consume(
  r: UdpReceiver,
  opts: { keep?: boolean; each?: (b: UdpBatch) => Promise<void> | void } = {},
): { done: Promise<Consumed> } {
  const out: Consumed = { tracker: new SequenceTracker(), batches: 0, seen: [] };
  const header: DatagramHeader = { magic: 0, flow: 0, seq: 0, sendUs: 0 };
  const done = (async () => {
    for await (const b of r) {
      out.batches++;
      const v = new DataView(b.data.buffer, b.data.byteOffset, b.data.byteLength);
      for (let i = 0; i < b.count; i++) {
        const off = b.offsets[i];
        const h = readHeader(v, off, b.lengths[i], header);
        if (h?.magic !== DATA_MAGIC) {
          out.tracker.unsequenced++;
          continue;
        }
        const { flow, seq } = h;
        out.tracker.record(flow, seq, h.sendUs, b.timesUs[i]);
        if (opts.keep) out.seen.push(`${flow}/${seq}/${b.lengths[i]}`);
      }
      if (opts.each) await opts.each(b);
    }
    return out;
  })();
  return { done };
}

/** Polls `cond` every 20 ms for up to `ms`; true if it became true. */
export async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(20);
  }
  return cond();
}

/** Sends raw payloads with node:dgram. */
export async function sendRaw(host: string, port: number, payloads: Buffer[]): Promise<void> {
  const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  for (const p of payloads) await new Promise<void>((r, j) => s.send(p, port, host, (e) => (e ? j(e) : r())));
  s.close();
}

/** Slow tests (30 s flood, 5 s stall) only when SOCKBUF_SLOW_TESTS=1; CI runs the short versions. */
export const SLOW = process.env.SOCKBUF_SLOW_TESTS === '1';

/** received + kernel drops + userspace drops + truncated: every datagram the receiver accounts for. */
export function accounted(r: UdpReceiver): number {
  const st = r.stats();
  return st.received + st.kernelDrops + st.userspaceDrops + st.truncated;
}
