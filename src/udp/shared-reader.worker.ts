// The reader thread every sockbuf/dgram socket of a process shares (shared-reader.ts starts it once):
// it blocks in epoll_wait over the sockets handed to it, and for each ready one takes up to BATCH
// datagrams with one recvmmsg into its scratch slots, packs them into the next free entry of the
// shared ring, then wakes the main thread. A socket is read once per round (level-triggered: one that still has data comes back next
// round), so a busy socket cannot starve the others. When the ring is full it waits for the main
// thread, unless the socket asked to drop (a bounded queue delay): then it reads and counts. Commands from the main thread (release a socket, close one, exit) come through a
// queue and an eventfd, and run at the end of a round, so that no fd is closed (and its number
// reused) while this round may still read it. It touches koffi only while it owns its life
// (shared-ring.ts's LIFE): at process exit the main thread asks it to stop and waits until it has
// left, so Node never stops it inside a koffi call (that aborted the process).
import { getPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { EAGAIN, EINTR, MSG_DONTWAIT, MSG_TRUNC } from '../sys/constants.js';
import { EPOLL_EVENT_SIZE, epollDel, epollEventAt, epollWait, eventFdDrain } from '../sys/epoll.js';
import { bindNow, fn, setThreadNice } from '../sys/libc.js';
import { CMSG_TIMESPEC_SPACE, MsgVec, recvmmsg } from '../sys/mmsg.js';
import { SysError } from '../sys/sys-error.js';
import { failureMessage } from '../sys/worker.js';
import { nowUs } from './clock.js';
import { entryOf, isFull } from './ring.js';
import {
  BATCH,
  COMMANDS,
  DATA_BYTES,
  ENTRIES,
  LIFE,
  NAME,
  OP,
  SCOUNT,
  SCTRL,
  type SharedRingData,
  SLOT,
  slotOf,
  WAKE_ID,
} from './shared-ring.js';

const MAX_EVENTS = 256;
/** How long the reader waits for the main thread to free an entry before it looks again. */
const FULL_WAIT_MS = 5;
/** The longest epoll_wait: a thread Node must stop (at exit) never blocks longer than this. */
const IDLE_WAIT_MS = 50;
/**
 * Datagrams that come faster than the thread wakes are left to gather this long before the next
 * epoll_wait (milliseconds): at 40 k/s, ~20 a recvmmsg and ~2 000 wake-ups a second (each thread's)
 * instead of one per datagram. Only when the last wait ended within that time, so a socket at a low
 * rate is read as soon as a datagram comes.
 */
const GATHER_MS = 0.5;

/** Thrown out of a wait for ring room when the main thread asks the thread to stop (process exit). */
const STOP = Symbol('stop');

/**
 * The thread's life: it claims NEW → RUNNING before it loads koffi (the main thread may have swapped
 * in STOP first: the process is exiting, and the thread never touches koffi), and stores DONE once
 * it makes no more koffi calls, for the main thread that waits on it at exit.
 */
function run(d: SharedRingData, ready: () => void): void {
  const ctrl = new Int32Array(d.ctrl);
  if (Atomics.compareExchange(ctrl, SCTRL.LIFE, LIFE.NEW, LIFE.RUNNING) !== LIFE.NEW) return;
  try {
    loop(d, ctrl, ready);
  } catch (e) {
    if (e !== STOP) throw e;
  } finally {
    Atomics.store(ctrl, SCTRL.LIFE, LIFE.DONE);
    Atomics.notify(ctrl, SCTRL.LIFE);
  }
}

function loop(d: SharedRingData, ctrl: Int32Array, ready: () => void): void {
  // every libc function it calls, bound now: nothing is bound late, in a round or a command
  bindNow('epoll_wait', 'epoll_ctl', 'read', 'close', 'recvmmsg', 'setpriority', 'gettid');
  const stopping = () => Atomics.load(ctrl, SCTRL.LIFE) === LIFE.STOP;
  const ids = new Int32Array(d.ids);
  const counts = new Int32Array(d.counts);
  const times = new Float64Array(d.times);
  const lengths = new Uint32Array(d.lengths);
  const offsets = new Uint32Array(d.offsets);
  const arrivals = new Float64Array(d.arrivals);
  const names = Buffer.from(d.names);
  const data = Buffer.from(d.data);
  const commands = new Int32Array(d.commands);
  const dropWhenFull = new Uint8Array(d.dropWhenFull);
  const counters = new Float64Array(d.counters);
  // every receive lands in the same scratch pages, then is packed into `data`
  const scratch = Buffer.allocUnsafeSlow(BATCH * SLOT);
  const scratchNames = Buffer.alloc(BATCH * NAME);
  const vec = new MsgVec({ count: BATCH, names: scratchNames, controlBytes: CMSG_TIMESPEC_SPACE });
  for (let i = 0; i < BATCH; i++) vec.setIov(i, scratch, i * SLOT, SLOT);
  let dirty = 0;
  // packing: `written` counts the bytes put in `data` (and skipped at its end), so that a datagram's
  // place is written % DATA_BYTES; starts[e] is where entry e's bytes began
  let written = 0;
  const starts = new Float64Array(ENTRIES);
  const events = Buffer.alloc(MAX_EVENTS * EPOLL_EVENT_SIZE);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let boost = 0;
  /** Whether the last round read datagrams that came while it waited less than GATHER_MS (and no full batch). */
  let gather = false;
  ready();

  const commit = (e: number, id: number, count: number) => {
    ids[e] = id;
    counts[e] = count;
    times[e] = nowUs();
    Atomics.add(ctrl, SCTRL.HEAD, 1);
    Atomics.add(ctrl, SCTRL.NOTIFY, 1);
    Atomics.notify(ctrl, SCTRL.NOTIFY);
  };
  /** The next free entry; waits for one unless `drop` (then the scratch entry, or −1 to skip). */
  const freeEntry = (drop: boolean): number => {
    for (;;) {
      const head = Atomics.load(ctrl, SCTRL.HEAD);
      const tail = Atomics.load(ctrl, SCTRL.TAIL);
      if (!isFull(head, tail, ENTRIES)) return entryOf(head, ENTRIES);
      if (drop) return ENTRIES;
      if (stopping()) throw STOP;
      Atomics.wait(ctrl, SCTRL.TAIL, tail, FULL_WAIT_MS);
    }
  };
  /** Bytes in `data` entries not yet released still hold. */
  const held = (): number => {
    const head = Atomics.load(ctrl, SCTRL.HEAD);
    const tail = Atomics.load(ctrl, SCTRL.TAIL);
    return head === tail ? 0 : written - starts[entryOf(tail, ENTRIES)];
  };
  /**
   * Entry e is the next to fill: its bytes begin here (every entry's, even one that holds none, so
   * that held() never reads an old start). When the ring is empty, packing starts again at the
   * beginning, on pages already touched.
   */
  const claim = (e: number): number => {
    if (held() === 0) written = Math.ceil(written / DATA_BYTES) * DATA_BYTES;
    starts[e] = written;
    return e;
  };
  /** Where a datagram of `len` bytes goes in `data` (−1: no room, and `drop` said not to wait). */
  const place = (len: number, drop: boolean): number => {
    for (;;) {
      const h = held();
      const at = written % DATA_BYTES;
      const skip = at + len > DATA_BYTES ? DATA_BYTES - at : 0;
      if (h + skip + len <= DATA_BYTES) {
        written += skip + len;
        return skip ? 0 : at;
      }
      if (drop) return -1;
      if (stopping()) throw STOP;
      Atomics.wait(ctrl, SCTRL.TAIL, Atomics.load(ctrl, SCTRL.TAIL), FULL_WAIT_MS);
    }
  };
  /** Reads one ready socket: the datagrams it took (-1: none, or an error). */
  const readSocket = (fd: number, id: number): number => {
    const slot = slotOf(id);
    const drop = dropWhenFull[slot] === 1;
    const e = freeEntry(drop);
    if (e !== ENTRIES) claim(e);
    if (dirty) vec.prepare(0, dirty);
    let r = recvmmsg(fd, vec, 0, BATCH, MSG_DONTWAIT);
    while (r === -EINTR) r = recvmmsg(fd, vec, 0, BATCH, MSG_DONTWAIT);
    if (r === -EAGAIN) return -1;
    if (r < 0) {
      // a receive error (ECONNREFUSED from an ICMP on a connected socket …): the socket emits it
      dirty = 0;
      if (e !== ENTRIES) commit(e, id, r);
      return -1;
    }
    dirty = r;
    if (e === ENTRIES) {
      counters[slot * SCOUNT.SIZE + SCOUNT.DROPS] += r;
      return r;
    }
    const base = e * BATCH;
    // the kernel's arrival stamps (CLOCK_REALTIME) in clock.ts's µs: Date.now() is the realtime clock
    // to the millisecond, so the offset is good to ±0.5 ms, as good as a queue bound needs
    const now = drop ? nowUs() : 0;
    const offset = drop ? Date.now() * 1000 + 500 - now : 0;
    let n = 0;
    for (let i = 0; i < r; i++) {
      let len = vec.msgLen(i);
      if (vec.msgFlags(i) & MSG_TRUNC) {
        counters[slot * SCOUNT.SIZE + SCOUNT.TRUNCATED]++;
        len = 0xffffffff;
      } else {
        const at = place(len, drop);
        if (at < 0) {
          // no room and a queue bound: the rest of the batch is dropped, as a full ring drops
          counters[slot * SCOUNT.SIZE + SCOUNT.DROPS] += r - i;
          break;
        }
        scratch.copy(data, at, i * SLOT, i * SLOT + len);
        offsets[base + n] = at;
      }
      if (drop) {
        const a = vec.arrivalUs(i);
        arrivals[base + n] = a > 0 ? Math.min(now, a - offset) : now;
      } else arrivals[base + n] = 0; // no bound: not judged (a bound set later finds no old stamp here)
      lengths[base + n] = len;
      n++;
    }
    if (n === 0) return 0;
    scratchNames.copy(names, base * NAME, 0, r * NAME);
    commit(e, id, n);
    return r;
  };
  /** Runs the commands queued so far; false once told to exit. */
  const runCommands = (): boolean => {
    eventFdDrain(d.evfd);
    let keep = true;
    for (;;) {
      const t = Atomics.load(ctrl, SCTRL.CMD_TAIL);
      if (t === Atomics.load(ctrl, SCTRL.CMD_HEAD)) break;
      const c = (t % COMMANDS) * 3;
      const [op, fd, id] = [commands[c], commands[c + 1], commands[c + 2]];
      if (op === OP.RELEASE) {
        epollDel(d.epfd, fd);
        commit(claim(freeEntry(false)), id, 0);
      } else if (op === OP.CLOSE) fn('close')(fd);
      else if (op === OP.EXIT) keep = false;
      Atomics.store(ctrl, SCTRL.CMD_TAIL, t + 1);
    }
    return keep;
  };

  for (;;) {
    const want = Atomics.load(ctrl, SCTRL.NICE_BOOST);
    if (want !== boost) {
      boost = want;
      setThreadNice(Math.max(-20, Math.min(19, getPriority() - boost)));
    }
    // the last round found datagrams that came while the thread woke: let the next ones gather
    if (gather) Atomics.wait(pause, 0, 0, GATHER_MS);
    const waitStart = performance.now();
    const n = epollWait(d.epfd, events, MAX_EVENTS, IDLE_WAIT_MS);
    const waited = performance.now() - waitStart;
    if (stopping()) return;
    if (n === -EINTR) continue;
    if (n < 0) throw new SysError('epoll_wait', -n);
    let wake = false;
    let read = 0;
    let full = false;
    for (let i = 0; i < n; i++) {
      const { id, fd } = epollEventAt(events, i);
      if (id === WAKE_ID) wake = true;
      else {
        const r = readSocket(fd, id);
        if (r > 0) read += r;
        if (r === BATCH) full = true;
      }
    }
    gather = read > 0 && !full && waited < GATHER_MS;
    if (wake && !runCommands()) return;
  }
}

if (parentPort && workerData) {
  try {
    const port = parentPort;
    run(workerData as SharedRingData, () => port.postMessage({ ready: true }));
    parentPort.postMessage({ exited: true });
  } catch (err) {
    parentPort.postMessage(failureMessage(err));
  }
}
