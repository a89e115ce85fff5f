// Loss, reordering, duplicates and jitter from the sequence numbers datagrams carry (as iperf3 -u
// counts them), per flow. Pure: record() is called for every datagram, in arrival order.
//
// Per flow it keeps the highest sequence number seen and a bitmap of the last WINDOW numbers, so a
// late datagram is told from a duplicate exactly while it is less than WINDOW behind the highest.
// lost = (datagrams sent, from the trailer, or else highest + 1) − distinct datagrams received.
// tailLost = sent − (highest + 1): how many of the last datagrams sent never came (seed 004).
// jitter is RFC 3550's: J += (|D| − J) / 16 over the transit-time differences of consecutive arrivals.

import { OPTIONS } from '../policy/option-registry.js';
import { DATA_MAGIC, type DatagramHeader, dataSeqAt, readHeader, sendUsAt } from './udp-header.js';

const WINDOW = 1 << 16;
const WORDS = WINDOW >>> 5;
/**
 * Flows tracked at most (what blast sends at most): each holds an 8 KiB bitmap, so datagrams naming
 * ever new flows must not grow the tracker past 8 MiB. Datagrams of flows past this are unsequenced.
 */
export const MAX_FLOWS = OPTIONS.flows.max;
/**
 * The highest sequence number (and count sent) counted: 2^40, 30 hours at 10 M datagrams/s, so that
 * sums over MAX_FLOWS flows stay exact doubles.
 */
const MAX_SEQ = 2 ** 40;
/** The most trailer copies a flow may announce (blast sends 3). */
const MAX_TRAILER_COPIES = 1024;

/**
 * Whether a header's numbers can be counted: a sequence number (or a trailer's count sent) that is a
 * whole number a double holds exactly, and a finite send time. Anything else (NaN, ±∞, 1e300, 2^53 + 2,
 * −1, 1.5) comes from a sender that is not blast: counting it would make loss figures of no meaning, and
 * past 2^53 the gap walk below would never end (s + 1 === s). Two datagrams did hang a sink that way.
 */
function countable(h: DatagramHeader): boolean {
  if (!Number.isInteger(h.seq) || h.seq < 0 || h.seq > MAX_SEQ) return false;
  if (h.magic === DATA_MAGIC) return Number.isFinite(h.sendUs);
  return h.copies === undefined || h.copies <= MAX_TRAILER_COPIES;
}

class FlowState {
  highest = -1;
  unique = 0;
  duplicates = 0;
  reordered = 0;
  sent = -1;
  /** Trailer copies the flow said it sends (-1: not said), and those that came. */
  trailerCopies = -1;
  trailers = 0;
  jitterUs = 0;
  lastTransit = Number.NaN;
  readonly bits = new Uint32Array(WORDS);

  record(seq: number, transitUs: number): void {
    const bits = this.bits;
    if (seq > this.highest) {
      const gap = seq - this.highest;
      if (gap >= WINDOW) bits.fill(0);
      else for (let s = this.highest + 1; s < seq; s++) bits[(s >>> 5) & (WORDS - 1)] &= ~(1 << (s & 31));
      bits[(seq >>> 5) & (WORDS - 1)] |= 1 << (seq & 31);
      this.highest = seq;
      this.unique++;
    } else if (this.highest - seq < WINDOW) {
      const w = (seq >>> 5) & (WORDS - 1);
      const m = 1 << (seq & 31);
      if (bits[w] & m) this.duplicates++;
      else {
        bits[w] |= m;
        this.unique++;
        this.reordered++;
      }
    } else {
      // Too far behind to tell: counted as a late arrival.
      this.unique++;
      this.reordered++;
    }
    this.jitter(transitUs);
  }

  /** record() of the next number in order (highest + 1), the common case, with nothing to clear. */
  next(seq: number, transitUs: number): void {
    this.bits[(seq >>> 5) & (WORDS - 1)] |= 1 << (seq & 31);
    this.highest = seq;
    this.unique++;
    this.jitter(transitUs);
  }

  private jitter(transitUs: number): void {
    if (!Number.isNaN(this.lastTransit)) {
      const d = Math.abs(transitUs - this.lastTransit);
      this.jitterUs += (d - this.jitterUs) / 16;
    }
    this.lastTransit = transitUs;
  }
}

export interface SequenceReport {
  /** Distinct sequenced datagrams received. */
  unique: number;
  lost: number;
  reordered: number;
  duplicates: number;
  /** Mean of the flows' RFC 3550 jitter, µs. */
  jitterUs: number;
  /** Of the last datagrams sent, how many never came; null when no trailer told how many were sent. */
  tailLost: number | null;
  /** Datagrams the senders reported sending (trailers), or null if not known for every flow. */
  sent: number | null;
  flows: number;
  /**
   * Trailer datagrams: received, and sent as the trailers say (null unless every flow said): with
   * them on both sides, sent + trailers.sent = every datagram a receiver accounts for.
   */
  trailers: { sent: number | null; received: number };
}

export class SequenceTracker {
  private readonly flows = new Map<number, FlowState>();
  private lastFlow = -1;
  private last: FlowState | undefined;
  /** The header being read, one object reused for every datagram. */
  private readonly header: DatagramHeader = { magic: 0, flow: 0, seq: 0, sendUs: 0, copies: undefined };
  /**
   * Datagrams not counted in any flow: no sockbuf header (too short, or foreign), numbers that cannot
   * be counted (see countable), or a flow past MAX_FLOWS.
   */
  unsequenced = 0;
  /** When the last data datagram (not a trailer) was received, µs since the epoch; 0 before one. */
  lastDataUs = 0;

  private flow(id: number): FlowState {
    if (id === this.lastFlow && this.last) return this.last;
    let f = this.flows.get(id);
    if (!f) {
      f = new FlowState();
      this.flows.set(id, f);
    }
    this.lastFlow = id;
    this.last = f;
    return f;
  }

  /** One data datagram: its flow, sequence number, send time and receive time (µs). */
  record(flow: number, seq: number, sendUs: number, recvUs: number): void {
    this.flow(flow).record(seq, recvUs - sendUs);
    if (recvUs > this.lastDataUs) this.lastDataUs = recvUs;
  }

  /**
   * One datagram as it came, at `off` of `view`, `len` bytes: its header (read with the one codec,
   * ends/udp-header.ts) recorded as data or trailer, or counted as unsequenced. Returns 1 for a trailer.
   */
  recordDatagram(view: DataView, off: number, len: number, recvUs: number): number {
    // the common case first: the next data datagram, in order, of the flow the last one was from
    // (what a GRO message's datagrams are), told by two reads and counted as record() would count it
    const f = this.last;
    if (f !== undefined) {
      const seq = dataSeqAt(view, off, len, this.lastFlow);
      if (seq === f.highest + 1 && seq <= MAX_SEQ) {
        const sendUs = sendUsAt(view, off);
        if (Number.isFinite(sendUs)) {
          f.next(seq, recvUs - sendUs);
          if (recvUs > this.lastDataUs) this.lastDataUs = recvUs;
          return 0;
        }
      }
    }
    const h = readHeader(view, off, len, this.header);
    if (!h || !countable(h) || (this.flows.size >= MAX_FLOWS && !this.flows.has(h.flow))) {
      this.unsequenced++;
      return 0;
    }
    if (h.magic === DATA_MAGIC) {
      this.record(h.flow, h.seq, h.sendUs, recvUs);
      return 0;
    }
    this.recordTrailer(h.flow, h.seq, h.copies);
    return 1;
  }

  /** A trailer: the flow sent `sent` data datagrams in all, and sends `copies` trailers (if it says). */
  recordTrailer(flow: number, sent: number, copies?: number): void {
    const f = this.flow(flow);
    f.sent = sent;
    f.trailers++;
    if (copies !== undefined) f.trailerCopies = copies;
  }

  report(): SequenceReport {
    let unique = 0;
    let lost = 0;
    let reordered = 0;
    let duplicates = 0;
    let jitter = 0;
    let tail = 0;
    let sent = 0;
    let allKnown = this.flows.size > 0;
    let trailersSent: number | null = this.flows.size > 0 ? 0 : null;
    let trailersReceived = 0;
    for (const f of this.flows.values()) {
      trailersReceived += f.trailers;
      trailersSent = trailersSent === null || f.trailerCopies < 0 ? null : trailersSent + f.trailerCopies;
      unique += f.unique;
      reordered += f.reordered;
      duplicates += f.duplicates;
      jitter += f.jitterUs;
      const expected = f.sent >= 0 ? f.sent : f.highest + 1;
      lost += Math.max(0, expected - f.unique);
      if (f.sent >= 0) {
        tail += Math.max(0, f.sent - (f.highest + 1));
        sent += f.sent;
      } else allKnown = false;
    }
    return {
      unique,
      lost,
      reordered,
      duplicates,
      jitterUs: this.flows.size ? jitter / this.flows.size : 0,
      tailLost: allKnown ? tail : null,
      sent: allKnown ? sent : null,
      flows: this.flows.size,
      trailers: { sent: trailersSent, received: trailersReceived },
    };
  }
}
