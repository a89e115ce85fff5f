// The dgram socket's receive side: the batched receiver's reader thread takes datagrams from the kernel
// with recvmmsg into its ring; this loop hands each batch to the socket's listeners: one 'messages'
// event per batch (the ring's views, valid while the listener runs) and one 'message' (msg, rinfo) per
// datagram, msg a copy the application may keep. Between batches it lets timers and I/O run.
import type { EventEmitter } from 'node:events';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { UdpBatch, UdpReceiver } from './receiver.js';

/** Where a datagram came from, as node:dgram's 'message' event gives it. */
export interface RemoteInfo {
  address: string;
  family: 'IPv4' | 'IPv6';
  port: number;
  size: number;
}

/** A 'messages' batch: the receiver's batch (views into its ring) and each datagram's source. */
export interface DgramBatch extends UdpBatch {
  /** Datagram i as a Buffer view (valid while the listener runs; copy it to keep it). */
  message(i: number): Buffer;
  /** Where datagram i came from. */
  rinfo(i: number): RemoteInfo;
}

/** An exception thrown by a listener is rethrown outside the loop, as Node's would surface. */
const rethrow = (e: unknown) =>
  process.nextTick(() => {
    throw e;
  });

/**
 * Reads `receiver` until it ends, emitting on `target` while `open()` says the socket is open.
 * Resolves when the receiver is closed (or stopped and drained).
 */
export async function pumpMessages(
  receiver: UdpReceiver,
  target: EventEmitter,
  open: () => boolean,
): Promise<void> {
  for (;;) {
    const b = await receiver.nextBatch();
    if (!b || !open()) return;
    deliver(b, target, open);
    // a busy socket must not hold timers and other sockets off: one turn of the loop per batch
    await yieldToLoop();
  }
}

function rinfoOf(b: UdpBatch, i: number): RemoteInfo {
  const a = b.addresses?.[i];
  return {
    address: a?.host ?? '',
    family: a?.family === 6 ? 'IPv6' : 'IPv4',
    port: a?.port ?? 0,
    size: b.lengths[i],
  };
}

export function deliver(b: UdpBatch, target: EventEmitter, open: () => boolean): void {
  if (target.listenerCount('messages') > 0) {
    const batch: DgramBatch = Object.assign(b, {
      message: (i: number) => b.data.subarray(b.offsets[i], b.offsets[i] + b.lengths[i]),
      rinfo: (i: number) => rinfoOf(b, i),
    });
    try {
      target.emit('messages', batch);
    } catch (e) {
      rethrow(e);
    }
  }
  if (target.listenerCount('message') === 0) return;
  const { data, offsets, lengths, count } = b;
  for (let i = 0; i < count && open(); i++) {
    const off = offsets[i];
    const len = lengths[i];
    const msg = Buffer.allocUnsafe(len);
    data.copy(msg, 0, off, off + len);
    try {
      target.emit('message', msg, rinfoOf(b, i));
    } catch (e) {
      rethrow(e);
    }
  }
}
