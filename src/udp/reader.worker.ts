// The reader thread of one socket: recvmmsg straight into the shared ring, coalescing each batch until
// it is full or the coalesce window ends (agave's recv_from_coalesce), splitting GRO messages into
// datagrams, and never waiting on the consumer unless told to (onFull: 'wait'). It stops within
// IDLE_WAIT_NS of the STOP flag, because it never blocks longer than that.
//
// While a batch is filling, the reader naps for the time the rest of the batch should take to arrive
// (at the rate recent batches arrived, never past the coalesce window) instead of waking for every
// datagram: a reader faster than its sender otherwise makes a recvmmsg call per datagram or two.
import { getPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { EAGAIN, EINTR, MSG_DONTWAIT, MSG_TRUNC } from '../sys/constants.js';
import { setThreadNice, setTimerSlack } from '../sys/libc.js';
import { MsgVec, NAME_SIZE, ReadableWaiter, recvmmsg } from '../sys/mmsg.js';
import { failureMessage } from '../sys/worker.js';
import { napNs, nowUs } from './clock.js';
import { splitGro } from './gro.js';
import { COUNTER, CTRL, entryOf, isFull, type RingLayout } from './ring.js';

export interface ReaderData {
  fd: number;
  layout: RingLayout;
  gro: boolean;
  coalesceNs: number;
  onFull: 'drop' | 'wait';
  controlBytes: number;
  data: SharedArrayBuffer;
  lengths: SharedArrayBuffer;
  offsets: SharedArrayBuffer;
  times: SharedArrayBuffer;
  counts: SharedArrayBuffer;
  entryBytes: SharedArrayBuffer;
  names?: SharedArrayBuffer;
  msgIndex?: SharedArrayBuffer;
  ctrl: SharedArrayBuffer;
  notify: SharedArrayBuffer;
  counters: SharedArrayBuffer;
}

const IDLE_WAIT_NS = 50e6;
const MIN_POLL_NS = 100e3;
/** The reader's timer slack: naps are tens to hundreds of microseconds. */
const TIMER_SLACK_NS = 5e3;
/**
 * How many nice levels of priority above its process the reader thread asks for (nice −10 in a
 * process at 0). While it is off the CPU only the socket buffer absorbs the flow,
 * and it shares its CPU with the consumer, V8's compiler and GC threads: at 3 M datagrams/s they
 * kept it away for 10–260 ms at a time. As root it asks for a little priority (best effort); it
 * sleeps whenever nothing is due, so it takes no more than it needs.
 */
export const READER_NICE_BOOST = 10;

function run(d: ReaderData): void {
  const { fd, layout, gro, coalesceNs } = d;
  const { entries, batch, slot, maxDatagrams } = layout;
  const data = Buffer.from(d.data);
  const lengths = new Uint32Array(d.lengths);
  const offsets = new Uint32Array(d.offsets);
  const times = new Float64Array(d.times);
  const counts = new Int32Array(d.counts);
  const entryBytes = new Float64Array(d.entryBytes);
  const names = d.names ? Buffer.from(d.names) : undefined;
  const msgIndex = d.msgIndex ? new Uint16Array(d.msgIndex) : undefined;
  const ctrl = new Int32Array(d.ctrl);
  const notify = new Int32Array(d.notify);
  const c = new Float64Array(d.counters);

  // One MsgVec per ring entry (and the scratch entry), each pointing at its own slots for good.
  const vecs: MsgVec[] = [];
  for (let e = 0; e <= entries; e++) {
    const v = new MsgVec({
      count: batch,
      names: names?.subarray(e * batch * NAME_SIZE, (e + 1) * batch * NAME_SIZE),
      controlBytes: d.controlBytes,
    });
    for (let i = 0; i < batch; i++) v.setIov(i, data, e * layout.batchBytes + i * slot, slot);
    vecs.push(v);
  }
  const dirty = new Int32Array(entries + 1);
  const waiter = new ReadableWaiter(fd);
  setTimerSlack(TIMER_SLACK_NS);
  setThreadNice(Math.max(-20, getPriority() - READER_NICE_BOOST));
  // mean nanoseconds between arriving messages, over recent batches (0: not known yet)
  let gapNs = 0;
  let lastEnd = 0;

  outer: while (Atomics.load(ctrl, CTRL.STOP) === 0) {
    let e: number;
    const head = Atomics.load(ctrl, CTRL.HEAD);
    if (!isFull(head, Atomics.load(ctrl, CTRL.TAIL), entries)) e = entryOf(head, entries);
    else if (d.onFull === 'wait') {
      Atomics.wait(ctrl, CTRL.TAIL, Atomics.load(ctrl, CTRL.TAIL), IDLE_WAIT_NS / 1e6);
      continue;
    } else e = entries; // the scratch entry: read to keep the socket drained, then drop
    const vec = vecs[e];
    if (dirty[e]) vec.prepare(0, dirty[e]);
    const base = e * maxDatagrams;
    let msgs = 0;
    let n = 0;
    let bytes = 0;
    let deadline = 0;
    while (msgs < batch) {
      const r = recvmmsg(fd, vec, msgs, batch - msgs, MSG_DONTWAIT);
      if (r > 0) {
        const t = nowUs();
        c[COUNTER.CALLS]++;
        c[COUNTER.MESSAGES] += r;
        for (let i = msgs; i < msgs + r; i++) {
          const len = vec.msgLen(i);
          if (vec.msgFlags(i) & MSG_TRUNC) {
            c[COUNTER.TRUNCATED]++;
            continue;
          }
          const k = splitGro(len, gro ? vec.groSegmentSize(i) : 0, i * slot, offsets, lengths, base + n);
          for (let j = 0; j < k; j++) times[base + n + j] = t;
          if (msgIndex) for (let j = 0; j < k; j++) msgIndex[base + n + j] = i;
          n += k;
          bytes += len;
        }
        msgs += r;
        if (deadline === 0) deadline = performance.now() * 1e6 + coalesceNs;
        continue;
      }
      if (r === -EINTR) continue;
      if (r !== -EAGAIN) {
        c[COUNTER.ERRORS]++;
        if (Atomics.load(ctrl, CTRL.STOP)) break outer;
      }
      if (msgs === 0) {
        waiter.wait(IDLE_WAIT_NS);
        if (Atomics.load(ctrl, CTRL.STOP)) break outer;
        // reading into the scratch batch because the ring was full: the consumer may have caught up
        // while the socket was idle, so look again rather than drop what comes next
        if (e === entries) continue outer;
        continue;
      }
      const left = deadline - performance.now() * 1e6;
      if (coalesceNs === 0 || left < MIN_POLL_NS) break;
      const nap = gapNs ? napNs(batch - msgs, gapNs, left) : 0;
      if (nap) waiter.nap(nap);
      else if (!waiter.wait(left)) break;
    }
    dirty[e] = msgs;
    if (msgs) {
      const end = performance.now() * 1e6;
      if (lastEnd) {
        const g = Math.min(end - lastEnd, IDLE_WAIT_NS) / msgs;
        gapNs = gapNs ? 0.75 * gapNs + 0.25 * g : g;
      }
      lastEnd = end;
    }
    if (n === 0) continue;
    if (e === entries) {
      c[COUNTER.USERSPACE_DROPS] += n;
      continue;
    }
    counts[e] = n;
    entryBytes[e] = bytes;
    c[COUNTER.RECEIVED] += n;
    c[COUNTER.BYTES] += bytes;
    Atomics.store(ctrl, CTRL.HEAD, (head + 1) | 0);
    Atomics.add(notify, 0, 1);
    Atomics.notify(notify, 0);
  }
  Atomics.store(ctrl, CTRL.DONE, 1);
  Atomics.add(notify, 0, 1);
  Atomics.notify(notify, 0);
}

if (parentPort && workerData) {
  try {
    parentPort.postMessage({ ready: true });
    run(workerData as ReaderData);
  } catch (err) {
    parentPort.postMessage(failureMessage(err));
  }
}
