// The dgram socket's send side: every datagram send() queues in one tick leaves in one batch, at the
// end of that tick, through the application sender's trySendBatch (sendmmsg, GSO for runs of equal
// sizes). A full socket buffer holds the rest of the queue until the socket is writable again (as
// libuv queues), so datagrams leave in the order they were given. Callbacks get (null, bytes) or
// Node's error ('send EMSGSIZE 127.0.0.1:9'); without a callback an error is dropped, as node:dgram does.
import { MAX_DATAGRAM } from '../policy/option-registry.js';
import { EAGAIN, EMSGSIZE } from '../sys/constants.js';
import { exceptionWithHostPort } from './dgram-errors.js';
import type { SendCallback } from './socket-args.js';

/** Where a datagram goes: an address and port, or undefined for the connected peer. */
export interface Destination {
  address: string;
  port: number;
}

/** A datagram sent with no address on a socket not connected (to port 0): `shown` is the address its error names. */
export interface Unaddressed {
  shown: string | undefined;
}

const addressed = (d: Destination | Unaddressed | undefined): d is Destination =>
  d !== undefined && 'port' in d;

/** What the queue sends through (UdpSender on the socket's descriptor). */
export interface BatchTransport {
  /** Sends datagrams [from, end); returns how many the kernel took; throws { errno, index, count } for a refused one. */
  trySendBatch(datagrams: Uint8Array[], to: Destination[] | undefined, from: number, end: number): number;
  /** Resolves when the socket can take more (or after `ms`). */
  writable(ms: number): Promise<unknown>;
}

/** The largest datagram sent in a batch, and over IPv4: 65535 − IPv4 header − UDP header. */
export const MAX_PAYLOAD = MAX_DATAGRAM;
/** Over IPv6 (the header is not counted in its payload length), as node:dgram: 65535 − UDP header. Sent alone. */
export const MAX_PAYLOAD6 = 65_527;

interface Refusal {
  errno: number;
  index: number;
  count: number;
}

const isRefusal = (e: unknown): e is Refusal =>
  typeof e === 'object' && e !== null && typeof (e as Refusal).errno === 'number' && 'index' in e;

export class SendQueue {
  private datagrams: Uint8Array[] = [];
  private dests: (Destination | Unaddressed | undefined)[] = [];
  private callbacks: (SendCallback | undefined)[] = [];
  private at = 0;
  private scheduled = false;
  private waiting = false;
  private closed = false;
  /** Datagrams and bytes the kernel took, and datagrams it refused. */
  sent = 0;
  sentBytes = 0;
  errors = 0;

  constructor(
    private readonly transport: BatchTransport,
    private readonly max: number,
  ) {}

  /** Queues a datagram; it leaves at the end of this tick with the others queued in it. */
  push(
    data: Uint8Array,
    to: Destination | Unaddressed | undefined,
    callback: SendCallback | undefined,
  ): void {
    if (this.closed) return;
    this.datagrams.push(data);
    this.dests.push(to);
    this.callbacks.push(callback);
    if (!this.scheduled && !this.waiting) {
      this.scheduled = true;
      process.nextTick(() => this.flush());
    }
  }

  /** Datagrams queued and not sent yet, and their bytes (getSendQueueCount / getSendQueueSize). */
  get count(): number {
    return this.datagrams.length - this.at;
  }

  get bytes(): number {
    let n = 0;
    for (let i = this.at; i < this.datagrams.length; i++) n += this.datagrams[i].length;
    return n;
  }

  /** Drops what is queued (close(): as node:dgram, a send not yet made is not made, its callback not called). */
  close(): void {
    this.closed = true;
    this.reset();
  }

  private reset(): void {
    this.datagrams = [];
    this.dests = [];
    this.callbacks = [];
    this.at = 0;
  }

  private done(i: number, error: Error | null): void {
    const cb = this.callbacks[i];
    if (error) this.errors++;
    else {
      this.sent++;
      this.sentBytes += this.datagrams[i].length;
    }
    // as node:dgram: a failed send's callback gets the error alone
    if (cb) error ? process.nextTick(cb, error) : process.nextTick(cb, null, this.datagrams[i].length);
  }

  private fail(i: number, errno: number): void {
    const d = this.dests[i];
    const where = addressed(d) ? d : { address: d?.shown, port: undefined };
    this.done(i, exceptionWithHostPort(-errno, 'send', where.address, where.port));
  }

  /** Sends the queue from `at`: runs to one kind of destination (addressed or connected) at a time. */
  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    const { datagrams, dests } = this;
    const end = datagrams.length;
    while (this.at < end) {
      const from = this.at;
      if (datagrams[from].length > this.max) {
        this.fail(from, EMSGSIZE);
        this.at++;
        continue;
      }
      const to = addressed(dests[from]);
      // one over the batched sender's limit (IPv6's largest) goes alone, with one sendto
      let stop = from + 1;
      if (datagrams[from].length <= MAX_PAYLOAD)
        while (stop < end && addressed(dests[stop]) === to && datagrams[stop].length <= MAX_PAYLOAD) stop++;
      let n: number;
      try {
        n = this.transport.trySendBatch(datagrams, to ? (dests as Destination[]) : undefined, from, stop);
      } catch (e) {
        if (!isRefusal(e)) throw e;
        for (let i = from; i < e.index; i++) this.done(i, null);
        for (let i = e.index; i < e.index + e.count; i++) this.fail(i, e.errno);
        this.at = e.index + e.count;
        continue;
      }
      for (let i = from; i < from + n; i++) this.done(i, null);
      this.at = from + n;
      if (this.at < stop) {
        this.wait();
        return;
      }
    }
    this.reset();
  }

  /** The socket buffer is full: go on once it is writable, the datagrams queued meanwhile behind. */
  private wait(): void {
    this.waiting = true;
    this.transport.writable(50).then(
      () => {
        this.waiting = false;
        this.flush();
      },
      () => {
        this.waiting = false;
        if (!this.closed) for (let i = this.at; i < this.datagrams.length; i++) this.fail(i, EAGAIN);
        this.reset();
      },
    );
  }
}
