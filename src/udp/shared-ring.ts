// The one ring all sockbuf/dgram sockets of a process share while their datagrams come through the
// reader thread (shared-reader.ts): pure layout and constants. Each entry is one recvmmsg of one
// socket (up to BATCH datagrams), tagged with the socket's id. The thread receives into its own
// scratch memory (BATCH slots of SLOT bytes, always the same pages) and copies each datagram into
// `data`, packed one after the other: a flood touches a few fresh pages, not one per datagram (the
// first touch of a page costs ~18 µs on this host: a ring with a SLOT-sized place per datagram made
// the first 40 ms after a hand-over run at 35 k/s, docs/dgram.md). `head` counts entries the reader
// committed, `tail` those the main thread released (ring.ts's arithmetic). Commands go the other
// way, main → reader, through a small queue and an eventfd.

/**
 * Entries: up to ENTRIES × BATCH datagrams (32 768) wait in userspace, at 48 bytes of bookkeeping each
 * (touched only as deep as the ring is used) besides their bytes in `data`. A small datagram costs the
 * kernel ~700 bytes of a socket's buffer (an 8 MiB one holds ~12 000), here its size: while the main
 * thread is slow, the backlog waits here rather than in the kernel (StatsD warmed, 128 entries: lost
 * 166 at 250 k/s; 1 024: none up to 250 k/s, docs/dgram.md).
 */
export const ENTRIES = 1024;
export const BATCH = 32;
/** The largest UDP payload, so that nothing is truncated: the size of each scratch slot. */
export const SLOT = 65536;
/** The packed datagrams' bytes: room for at least two entries of the largest datagrams. */
export const DATA_BYTES = 4 * BATCH * SLOT;
/** Room for a sockaddr_in6, as mmsg.ts's NAME_SIZE. */
export const NAME = 32;
/** Socket slots: an id is slot | generation << 16. */
export const SLOTS = 65536;
export const COMMANDS = 1024;
/** The id the eventfd's events carry in the reader's epoll set (a socket's id is never negative). */
export const WAKE_ID = -1;

/** Control words (Int32Array). */
export const SCTRL = {
  HEAD: 0,
  TAIL: 1,
  /** Bumped (and notified) by the reader after each commit: the main thread waits on it. */
  NOTIFY: 2,
  /** Commands written (main) and taken (reader). */
  CMD_HEAD: 3,
  CMD_TAIL: 4,
  /** Nice levels above its process the reader thread should run at (0: the process's). */
  NICE_BOOST: 5,
  /** The reader thread's eventfd and epoll fd, for the record. */
  EVENT_FD: 6,
  EPOLL_FD: 7,
  /** Where the reader thread is in its life (LIFE): the exit handshake with the main thread. */
  LIFE: 8,
  SIZE: 9,
} as const;

/**
 * The reader thread's life, for the exit handshake. Node stops a worker at process exit by
 * terminating its JavaScript: a koffi call in that thread from then on (loading libc, binding a
 * function: koffi's own N-API calls fail, and the exception it throws about it cannot be thrown
 * either) aborts the whole process (`FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw`,
 * exit 134). So the thread touches koffi only between NEW → RUNNING (its own compare-and-swap,
 * before it loads koffi) and its store of DONE; at 'exit' the main thread swaps NEW → STOP (the
 * thread will never start) or RUNNING → STOP and waits for DONE before Node may stop the thread.
 */
export const LIFE = { NEW: 0, RUNNING: 1, STOP: 2, DONE: 3 } as const;

// An entry's count: the datagrams in it; 0 marks a released socket (OP.RELEASE); below zero, −errno of
// a failed receive (ECONNREFUSED after an ICMP error on a connected socket …).

export const OP = {
  /** Stop watching fd, then commit a count-0 entry for id: everything before it is delivered. */
  RELEASE: 1,
  /** close(fd) (which stops the watch): after this round, so no fd number is reused under it. */
  CLOSE: 2,
  EXIT: 3,
} as const;

/** Per socket slot (Float64Array SLOTS × 2): datagrams dropped by the reader, and truncated. */
export const SCOUNT = { DROPS: 0, TRUNCATED: 1, SIZE: 2 } as const;

export interface SharedRingData {
  ctrl: SharedArrayBuffer;
  /** Per entry: the socket id, the count (or −errno), the time read (wall-clock µs). */
  ids: SharedArrayBuffer;
  counts: SharedArrayBuffer;
  times: SharedArrayBuffer;
  /** Per message: its length, where its bytes start in `data`, its sender's address, and for a socket
   * with a queue bound when it reached the socket's queue (the kernel's stamp, in clock.ts's µs). */
  lengths: SharedArrayBuffer;
  offsets: SharedArrayBuffer;
  arrivals: SharedArrayBuffer;
  names: SharedArrayBuffer;
  data: SharedArrayBuffer;
  /** Commands: op, fd, id (Int32Array COMMANDS × 3). */
  commands: SharedArrayBuffer;
  /**
   * Per socket slot: whether the socket has a queue bound (Uint8Array SLOTS): the reader drops its
   * datagrams when the ring is full, and stamps each with its arrival time.
   */
  dropWhenFull: SharedArrayBuffer;
  counters: SharedArrayBuffer;
  epfd: number;
  evfd: number;
}

export function sharedRingData(epfd: number, evfd: number): SharedRingData {
  const sab = (n: number) => new SharedArrayBuffer(n);
  const e1 = ENTRIES + 1;
  return {
    ctrl: sab(SCTRL.SIZE * 4),
    ids: sab(e1 * 4),
    counts: sab(e1 * 4),
    times: sab(e1 * 8),
    lengths: sab(e1 * BATCH * 4),
    offsets: sab(e1 * BATCH * 4),
    arrivals: sab(e1 * BATCH * 8),
    names: sab(e1 * BATCH * NAME),
    data: sab(DATA_BYTES),
    commands: sab(COMMANDS * 3 * 4),
    dropWhenFull: sab(SLOTS),
    counters: sab(SLOTS * SCOUNT.SIZE * 8),
    epfd,
    evfd,
  };
}

export const slotOf = (id: number) => id & 0xffff;
