// The main-thread side of one reader (reader.worker.ts is the thread's side): the shared memory the
// thread fills (allocated here, handed to reader.worker.ts), the thread itself, and the view of one
// committed ring entry as a UdpBatch. The receiver (receiver.ts) owns the life cycle; this file knows
// the memory layout only.
import type { Worker } from 'node:worker_threads';
import { CMSG_INT_SPACE, NAME_SIZE } from '../sys/mmsg.js';
import { decodeSockaddr, type Endpoint } from '../sys/sockaddr.js';
import type { SockbufError } from '../sys/sockbuf-error.js';
import { spawnWorker, type WorkerFailureMessage, workerFailure } from '../sys/worker.js';
import type { ReaderData } from './reader.worker.js';
import { COUNTER, CTRL, entryOf, type RingLayout } from './ring.js';

/**
 * One batch of datagrams. Datagram i is data[offsets[i] … offsets[i] + lengths[i]). The views point
 * into the ring: they stay valid until the next batch is requested, and are reused after that.
 */
export interface UdpBatch {
  count: number;
  lengths: Uint32Array;
  offsets: Uint32Array;
  data: Buffer;
  /** When each datagram was taken from the kernel, µs since the epoch (one stamp per recvmmsg call). */
  timesUs: Float64Array;
  /** Source addresses, when the receiver was made with addresses: true. */
  addresses?: Endpoint[];
  /** Which socket (0 … sockets−1) it came from. */
  socket: number;
}

/** One socket's reader thread and the views of the ring it fills. */
export interface Ring {
  fd: number;
  worker: Worker;
  ctrl: Int32Array;
  counters: Float64Array;
  data: Buffer;
  lengths: Uint32Array;
  offsets: Uint32Array;
  times: Float64Array;
  counts: Int32Array;
  entryBytes: Float64Array;
  names?: Buffer;
  msgIndex?: Uint16Array;
  exited: Promise<void>;
  /** Why the thread stopped taking datagrams when nobody stopped it: a SysError with its errno, or ERR_SOCKBUF_WORKER. */
  failure?: SockbufError;
}

export interface ReaderSettings {
  layout: RingLayout;
  gro: boolean;
  coalesceSeconds: number;
  onFull: 'drop' | 'wait';
  /** Keep each message's source address. */
  addresses: boolean;
  /** Where every reader bumps a counter when it commits a batch (one for all sockets). */
  notify: Int32Array;
  /** Whose reader it is, for its errors (the receiver's `host:port`). */
  where: string;
}

/** Allocates the ring of socket `fd` (one scratch entry beyond `entries`) and starts its thread. */
export function startReader(fd: number, s: ReaderSettings): Ring {
  const L = s.layout;
  const e1 = L.entries + 1;
  const sab = (bytes: number) => new SharedArrayBuffer(bytes);
  const d: ReaderData = {
    fd,
    layout: L,
    gro: s.gro,
    coalesceNs: Math.round(s.coalesceSeconds * 1e9),
    onFull: s.onFull,
    controlBytes: s.gro ? CMSG_INT_SPACE : 0,
    data: sab(e1 * L.batchBytes),
    lengths: sab(e1 * L.maxDatagrams * 4),
    offsets: sab(e1 * L.maxDatagrams * 4),
    times: sab(e1 * L.maxDatagrams * 8),
    counts: sab(e1 * 4),
    entryBytes: sab(e1 * 8),
    names: s.addresses ? sab(e1 * L.batch * NAME_SIZE) : undefined,
    msgIndex: s.addresses ? sab(e1 * L.maxDatagrams * 2) : undefined,
    ctrl: sab(CTRL.SIZE * 4),
    notify: s.notify.buffer as SharedArrayBuffer,
    counters: sab(COUNTER.SIZE * 8),
  };
  const worker = spawnWorker(new URL('./reader.worker', import.meta.url), { workerData: d });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const ring: Ring = {
    fd,
    worker,
    exited,
    ctrl: new Int32Array(d.ctrl),
    counters: new Float64Array(d.counters),
    data: Buffer.from(d.data),
    lengths: new Uint32Array(d.lengths),
    offsets: new Uint32Array(d.offsets),
    times: new Float64Array(d.times),
    counts: new Int32Array(d.counts),
    entryBytes: new Float64Array(d.entryBytes),
    names: d.names ? Buffer.from(d.names) : undefined,
    msgIndex: d.msgIndex ? new Uint16Array(d.msgIndex) : undefined,
  };
  // a thread that fails or ends without being stopped will take nothing more: say it once, and wake
  // the consumer, whose next batch then throws instead of waiting for datagrams forever
  const fail = (err: SockbufError) => {
    if (ring.failure) return;
    ring.failure = err;
    process.emitWarning(err.message, { code: 'SOCKBUF_READER' });
    Atomics.add(s.notify, 0, 1);
    Atomics.notify(s.notify, 0);
  };
  worker.on('message', (m: Partial<WorkerFailureMessage>) => {
    if (m.error) fail(workerFailure(`${s.where}: UDP reader stopped`, m as WorkerFailureMessage));
  });
  worker.on('error', (err) => fail(workerFailure(`${s.where}: UDP reader failed`, err)));
  worker.once('exit', (code) => {
    if (!Atomics.load(ring.ctrl, CTRL.DONE))
      fail(
        workerFailure(s.where, {
          error: `UDP reader thread ended (exit code ${code}) before it was stopped`,
        }),
      );
  });
  return ring;
}

/** Resolves once the thread says it runs; rejects (a SysError with its errno, or ERR_SOCKBUF_WORKER) if it fails or exits first. */
export function readerReady(r: Ring): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMsg = (m: { ready?: boolean } & Partial<WorkerFailureMessage>) => {
      if (m.ready) resolve();
      else if (m.error) reject(workerFailure('UDP reader failed', m as WorkerFailureMessage));
    };
    r.worker.on('message', onMsg);
    r.worker.once('error', (e) => reject(workerFailure('UDP reader failed', e)));
    r.worker.once('exit', () => reject(workerFailure('UDP reader failed', { error: 'the thread exited' })));
  });
}

/** The oldest committed entry of ring `r` (socket `socket`) as a batch, and its bytes. */
export function batchAt(r: Ring, L: RingLayout, socket: number): { batch: UdpBatch; bytes: number } {
  const e = entryOf(Atomics.load(r.ctrl, CTRL.TAIL), L.entries);
  const count = r.counts[e];
  const base = e * L.maxDatagrams;
  const batch: UdpBatch = {
    count,
    lengths: r.lengths.subarray(base, base + count),
    offsets: r.offsets.subarray(base, base + count),
    data: r.data.subarray(e * L.batchBytes, (e + 1) * L.batchBytes),
    timesUs: r.times.subarray(base, base + count),
    socket,
  };
  if (r.names && r.msgIndex) {
    const names = r.names;
    const idx = r.msgIndex;
    const nb = e * L.batch * NAME_SIZE;
    batch.addresses = Array.from(
      { length: count },
      (_, i) => decodeSockaddr(names, nb + idx[base + i] * NAME_SIZE) as Endpoint,
    );
  }
  return { batch, bytes: r.entryBytes[e] };
}

/** Hands entry back to the reader (the consumer is done with the batch it viewed). */
export function releaseEntry(r: Ring): void {
  Atomics.add(r.ctrl, CTRL.TAIL, 1);
  Atomics.notify(r.ctrl, CTRL.TAIL);
}
