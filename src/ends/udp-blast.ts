// `blast udp`'s paced test sender: `flows` sockets with distinct source ports, every datagram stamped
// with the test header (flow, sequence number, send time: ./udp-header.ts) and handed to the
// library's sender (src/udp/sender.ts: sendmmsg, GSO runs). Pacing follows iperf3's pacing timer:
// every ~1 ms it sends what is due since the start, so a rate is met on average with bursts of about
// a millisecond's worth. Sequence numbers are assigned only to datagrams the kernel accepted, so
// sent = what a receiver can account for, exactly.
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import { setTimeout as sleep, setImmediate as yieldNow } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import { readSnmpOrEmpty } from '../observe/proc.js';
import { formatHostPort, type HostPort, parseUnicastTo } from '../policy/address.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { resolveFirst } from '../policy/resolve.js';
import { durationMs } from '../policy/units.js';
import { MAX_SEGMENTS } from '../udp/gro.js';
import { gsoAvailable } from '../udp/offload.js';
import { MAX_DATAGRAM, UdpSendError, UdpSender } from '../udp/sender.js';
import {
  paceKept,
  paceWarning,
  parseSendRate,
  type UdpBlastOptions,
  type UdpBlastResult,
} from './udp-blast-options.js';
import {
  HEADER_BYTES,
  nowUs,
  stampHeaders,
  TRAILER_BYTES,
  TRAILER_MAGIC,
  writeHeader,
} from './udp-header.js';

export type { UdpBlastOptions, UdpBlastResult } from './udp-blast-options.js';
export { parseSendRate } from './udp-blast-options.js';

interface Flow {
  sender: UdpSender;
  id: number;
  seq: number;
}

let openingOf: (b: UdpBlast) => Promise<void> | undefined;

/** A UDP sending end (`sockbuf blast udp`): numbered datagrams at a rate, over one or more flows. */
export class UdpBlast {
  readonly to: HostPort;
  readonly size: number;
  readonly rate: number;
  private readonly flows: Flow[] = [];
  /** Datagrams one send hands the library (a sendmmsg's worth: batch messages × segments). */
  private readonly capacity: number;
  private readonly segs: number;
  private gso: boolean;
  private gsoFallback: string | undefined;
  private readonly buf: Buffer;
  private next = 0;
  private sent = 0;
  private bytes = 0;
  private errors = 0;
  private blocked = 0;
  private readonly byCode: Record<string, number> = {};
  private closed = false;
  private opening: Promise<void> | undefined;
  /** Called when GSO was asked for and the kernel refused it (once), and when a pace was not kept. */
  onWarning: (message: string) => void = (m) => process.emitWarning(m, { code: 'SOCKBUF_GSO' });

  /** Checks the options and opens the flows (for a host name, once it resolves); createUdpBlast also waits for that. */
  constructor(o: UdpBlastOptions) {
    this.to = parseUnicastTo(o.to);
    this.size = checkOption('blastSize', o.size ?? OPTIONS.blastSize.default, 'size');
    this.rate = parseSendRate(o.rate ?? OPTIONS.rate.default, this.size);
    const flows = checkWhole('flows', o.flows ?? OPTIONS.flows.default);
    const batch = checkWhole('blastBatch', o.batch ?? OPTIONS.blastBatch.default, 'batch');
    this.gso = gsoAvailable(o.gso ?? false);
    const gsoFits = this.size >= HEADER_BYTES && Math.floor(MAX_DATAGRAM / this.size) >= 2;
    // GSO asked for by name, for a size it cannot send: refused, never sent without GSO in silence
    if (o.gso === true && !gsoFits)
      throw new UsageError(
        (name) =>
          `${name('gso')} on cannot send ${name('size')} ${this.size}: GSO needs ${HEADER_BYTES} to ${MAX_DATAGRAM >> 1} bytes (two datagrams or more in one ${MAX_DATAGRAM} B send); use ${name('gso')} auto or off`,
        ['gso', 'size'],
        { value: String(this.size) },
      );
    if (o.gso === true || o.gso === 'auto') {
      if (!this.gso) this.gsoFallback = 'the kernel refuses UDP_SEGMENT';
      else if (!gsoFits) {
        this.gso = false;
        this.gsoFallback = `size ${this.size}: GSO needs ${HEADER_BYTES} to ${MAX_DATAGRAM >> 1} bytes`;
      }
    }
    this.segs = this.gso ? Math.min(MAX_SEGMENTS, Math.floor(MAX_DATAGRAM / this.size)) : 1;
    this.capacity = batch * this.segs;
    this.buf = Buffer.alloc(Math.max(this.capacity * this.size, HEADER_BYTES));
    const open = (host: string) => this.open(host, flows, batch, o.sndbuf);
    // a host name: the sockets are made once it resolves (run() and sendTrailer() wait for it)
    if (isIP(this.to.host)) open(this.to.host);
    else {
      this.opening = resolveFirst(this.to.host, { option: 'to', value: formatHostPort(this.to) }).then(open);
      this.opening.catch(() => {}); // reported where it is awaited
    }
  }

  /** Makes the flows' senders, each a socket connected to `host` (an address). */
  private open(host: string, flows: number, batch: number, sndbuf: number | string | undefined): void {
    if (this.closed) return;
    const base = randomInt(1 << 22) << 8;
    try {
      for (let i = 0; i < flows; i++) {
        const sender = new UdpSender({ to: { host, port: this.to.port }, batch, sndbuf, gso: this.gso });
        sender.onWarning = (m) => this.onWarning(m);
        this.flows.push({ sender, id: (base + i) >>> 0, seq: 0 });
      }
    } catch (e) {
      for (const f of this.flows) f.sender.close();
      this.flows.length = 0;
      throw e;
    }
  }

  static {
    // createUdpBlast's view of the resolution in progress, kept off the public surface
    openingOf = (b) => b.opening;
  }

  /** SO_SNDBUF as getsockopt reports it. */
  get sndbuf(): number {
    return this.flows[0].sender.sndbuf;
  }

  /** The flows' socket descriptors, to set further options on (the blast owns and closes them). */
  get fds(): number[] {
    return this.flows.map((f) => f.sender.fd);
  }

  /** Whether the flows send with UDP_SEGMENT: asked for, and allowed by the kernel and the size. */
  get usingGso(): boolean {
    return this.gso;
  }

  /** Sends up to `want` datagrams (≤ one sendmmsg's capacity) on the next flow; returns how many went. */
  private sendSome(want: number): number {
    const flow = this.flows[this.next];
    this.next = (this.next + 1) % this.flows.length;
    const size = this.size;
    const n = Math.min(want, this.capacity);
    if (size >= HEADER_BYTES) stampHeaders(this.buf, n, size, flow.id, flow.seq, nowUs());
    let done: number;
    try {
      done = flow.sender.trySendSegments(this.buf, size, undefined, 0, n);
      if (done === 0) this.blocked++;
    } catch (e) {
      if (!(e instanceof UdpSendError)) throw e;
      done = e.sent;
      this.errors++;
      this.byCode[e.code] = (this.byCode[e.code] ?? 0) + 1;
    }
    // all datagrams have one size: a refusal at any segment size is a refusal of them all
    const refused = flow.sender.gsoRefusal;
    if (this.gso && refused) {
      this.gso = false;
      this.gsoFallback = refused.code;
    }
    flow.seq += done;
    this.sent += done;
    this.bytes += done * size;
    return done;
  }

  /**
   * Sends until `duration` has passed (milliseconds, or a string with its unit: '1.5s') or `count`
   * datagrams went (whichever comes first), or the signal aborts. Yields to the event loop at least
   * every 2 ms.
   */
  async run(
    opts: { duration?: number | string; count?: number; signal?: AbortSignal } = {},
  ): Promise<UdpBlastResult> {
    if (opts.duration === undefined && opts.count === undefined)
      throw new UsageError('a send needs a duration or a count');
    await this.opening;
    const t0 = performance.now() / 1e3;
    const end =
      t0 +
      (opts.duration === undefined ? Number.POSITIVE_INFINITY : durationMs(opts.duration, 'duration') / 1e3);
    const limit = opts.count ?? Number.POSITIVE_INFINITY;
    const sent0 = this.sent;
    const bytes0 = this.bytes;
    const calls0 = this.calls();
    const host0 = readSnmpOrEmpty().Udp?.SndbufErrors ?? 0;
    const cpu0 = process.cpuUsage();
    let t = t0;
    let lastSend = t0;
    while (!this.closed && !opts.signal?.aborted) {
      t = performance.now() / 1e3;
      const done = this.sent - sent0;
      if (done >= limit) break;
      // due by now, or by the end once it has passed (one slice): a timer that woke late does not cut
      // the tail
      let due = Math.min(
        limit - done,
        Number.isFinite(this.rate)
          ? Math.floor(this.rate * (Math.min(t, end) - t0)) - done
          : t < end
            ? 1e9
            : 0,
      );
      if (due <= 0) {
        if (t >= end) break;
        const wait = (done + 1) / this.rate - (t - t0);
        await sleep(Math.max(1, Math.min(wait * 1e3, (end - t) * 1e3)));
        continue;
      }
      // With GSO, send whole super-datagrams: wait (≤ 1 ms) until a full one is due, or the receiver
      // gets a GRO message per few datagrams and GRO buys nothing.
      if (due < this.segs && due < limit - done && t - lastSend < 1e-3 && t < end) {
        await yieldNow();
        continue;
      }
      lastSend = t;
      const sliceEnd = t + 0.002;
      let stalled = false;
      while (due > 0) {
        const n = this.sendSome(due);
        due -= n;
        if (n === 0) {
          stalled = true;
          break;
        }
        if (performance.now() / 1e3 >= sliceEnd) break;
      }
      if (t >= end) break; // past the end: one slice of what was due by then, no more
      if (stalled) await sleep(1);
      else await yieldNow();
    }
    const seconds = Math.max(1e-9, performance.now() / 1e3 - t0);
    const cpu = process.cpuUsage(cpu0);
    const sent = this.sent - sent0;
    const bytes = this.bytes - bytes0;
    // a paced run kept its pace when what went is what was due over the time it ran, or its count
    const asked = Number.isFinite(this.rate) ? this.rate : undefined;
    const result: UdpBlastResult = {
      sent,
      bytes,
      seconds,
      datagramsPerSecond: sent / seconds,
      bitsPerSecond: (bytes * 8) / seconds,
      sendErrors: this.errors,
      sendErrorsByCode: { ...this.byCode },
      sendBlocked: this.blocked,
      hostSndbufErrors: (readSnmpOrEmpty().Udp?.SndbufErrors ?? 0) - host0,
      sendCalls: this.calls() - calls0,
      flows: this.flows.length,
      size: this.size,
      gso: this.gso,
      endedAtMs: performance.timeOrigin + lastSend * 1e3,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      ...(this.gsoFallback ? { gsoFallback: this.gsoFallback } : {}),
      ...(asked === undefined
        ? {}
        : {
            askedDatagramsPerSecond: asked,
            // no datagram at all is no pace kept, however few were due
            paceKept:
              sent > 0 && (sent >= limit || paceKept(asked, sent, Math.min(seconds, end - t0), this.segs)),
          }),
    };
    if (result.paceKept === false && !opts.signal?.aborted && !this.closed)
      this.onWarning(paceWarning(result));
    return result;
  }

  private calls(): number {
    let n = 0;
    for (const f of this.flows) n += f.sender.stats().calls;
    return n;
  }

  /**
   * Tells the receiver how many datagrams each flow sent (a trailer datagram per flow, `copies` times,
   * `gapMs` apart), so it can count the tail that never came. Trailers are not counted in `sent`; each
   * says how many copies its flow sends, and a copy the socket buffer refuses (EAGAIN) is sent again
   * (for up to a second), so a receiver can count the trailers on both sides of its accounting.
   * Returns the trailer datagrams sent.
   */
  async sendTrailer(copies = 3, gapMs = 20): Promise<number> {
    await this.opening;
    const b = Buffer.alloc(TRAILER_BYTES);
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const one = [b];
    let sent = 0;
    for (let c = 0; c < copies; c++) {
      if (c) await sleep(gapMs);
      for (const f of this.flows) {
        writeHeader(v, 0, { magic: TRAILER_MAGIC, flow: f.id, seq: f.seq, sendUs: nowUs(), copies });
        for (let tries = 0; tries < 1000; tries++) {
          try {
            if (f.sender.trySendBatch(one) === 1) {
              sent++;
              break;
            }
          } catch (e) {
            if (e instanceof UdpSendError) break;
            throw e;
          }
          await sleep(1);
        }
      }
    }
    return sent;
  }

  /** The destination as `host:port`. */
  get address(): string {
    return formatHostPort(this.to);
  }

  /** Closes the flows' sockets. A run in progress stops sending. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.flows) f.sender.close();
  }
}

/**
 * Makes a blast with its flows' sockets open (a host name resolved first): like createUdpSender and
 * createUdpReceiver, async. Rejects with a UsageError naming a bad option, or a ResolveError for `to`.
 */
export async function createUdpBlast(options: UdpBlastOptions): Promise<UdpBlast> {
  const blast = new UdpBlast(options);
  try {
    await openingOf(blast);
  } catch (err) {
    blast.close();
    throw err;
  }
  return blast;
}
