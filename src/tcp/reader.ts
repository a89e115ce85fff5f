// How a TCP socket's bytes reach JavaScript: the adaptive reader (seed 002), a fixed one, or Node's
// plain 'data' path (the baseline). The adaptive and fixed readers use net.Socket's `onread` with a
// buffer function, which Node calls after every read (measured on Node 20): the sizer decides the size of
// the next read, and each chunk is handed to the consumer synchronously, as a view.
//
// Adaptive readers all read into one process-wide buffer (each chunk is consumed before the next read
// anywhere in the process), so a socket holds no read buffer of its own: an idle connection costs a
// sizer's few numbers. A fixed reader owns its buffer, as `onread: { buffer: Buffer.alloc(n) }` does.
import type net from 'node:net';
import { UsageError } from '../errors.js';
import { isLoopback } from '../policy/address.js';
import { durationMs, parseSize } from '../policy/units.js';
import type { OnRead } from '../sys/socket.js';
import { POLL_DEFAULT_US, poller } from './poll.js';
import { ReadProbe } from './probe.js';
import { AdaptiveSizer, checkSizerBounds, SIZER_MAX_BYTES, SIZER_MIN_BYTES } from './sizer.js';

/**
 * Node pays ~1.5–3 µs of its own per read (the onread callback's trip from libuv into JavaScript), so
 * fewer, larger reads drain faster, until a read's copy no longer stays in a core's cache (Erlang/OTP
 * found 128–256 KiB best and 1 MiB slower, seed 002; on the next host 64 KiB was best): where the knee
 * lies is the host's. A hot stream's cap is learned on the connection (src/tcp/probe.ts), starting at
 * PROBE_START_BYTES, between 32 KiB and the max; scripts/drain-bench.ts measures it against fixed sizes,
 * node:net and a C read() loop.
 */
export const ADAPTIVE_MIN_BYTES = 512;
export const ADAPTIVE_MAX_BYTES = 1024 * 1024;
/** The prober's first cap: what libuv reads per call for node:net (a start, not a tuned value). */
export const PROBE_START_BYTES = 64 * 1024;
/** What Node's 'data' path reads into: libuv suggests 64 KiB per read. */
export const DATA_READ_BYTES = 64 * 1024;

/** The reader option of connect/listen. */
export type ReaderOption =
  | 'adaptive'
  | 'data'
  | { adaptive: { min?: number; max?: number; poll?: number | string } }
  | { fixed: number };

export type ReaderSpec =
  /**
   * poll: the bound on polling while a stream is hot, in µs (0: never; see src/tcp/poll.ts), or
   * 'loopback' (the default): POLL_DEFAULT_US when the peer is a loopback address, else 0.
   */
  | { kind: 'adaptive'; min: number; max: number; poll: number | 'loopback' }
  | { kind: 'fixed'; size: number }
  | { kind: 'data' };

/** Resolves the option (default 'adaptive') to a spec with every bound filled; throws UsageError. */
export function resolveReader(option: ReaderOption | ReaderSpec | undefined, name = 'reader'): ReaderSpec {
  if (option === undefined || option === 'adaptive')
    return { kind: 'adaptive', min: ADAPTIVE_MIN_BYTES, max: ADAPTIVE_MAX_BYTES, poll: 'loopback' };
  if (option === 'data') return { kind: 'data' };
  if (typeof option === 'object' && option !== null) {
    if ('kind' in option) return resolveReader(specToOption(option), name);
    if ('fixed' in option) {
      const f = option.fixed;
      if (!Number.isSafeInteger(f) || f < SIZER_MIN_BYTES || f > SIZER_MAX_BYTES)
        throw new UsageError(
          (n) =>
            `invalid value for ${n(name)}: fixed size ${f} (expected ${SIZER_MIN_BYTES} to ${SIZER_MAX_BYTES} bytes)`,
          name,
        );
      return { kind: 'fixed', size: option.fixed };
    }
    if ('adaptive' in option) {
      const a = option.adaptive ?? {};
      const min = a.min ?? Math.min(ADAPTIVE_MIN_BYTES, a.max ?? ADAPTIVE_MIN_BYTES);
      const max = a.max ?? Math.max(ADAPTIVE_MAX_BYTES, min);
      checkSizerBounds(min, max, name);
      if (a.poll === undefined || a.poll === 'loopback')
        return { kind: 'adaptive', min, max, poll: 'loopback' };
      const poll = Math.round(durationMs(a.poll, name) * 1000);
      if (poll > POLL_MAX_US)
        throw UsageError.invalid(name, String(a.poll), `a polling bound from 0 to ${POLL_MAX_US} µs`);
      return { kind: 'adaptive', min, max, poll };
    }
  }
  throw new UsageError(
    (n) =>
      `invalid value for ${n(name)}: ${JSON.stringify(option)} (expected 'adaptive', 'data', { adaptive: { min, max } } or { fixed: size })`,
    name,
  );
}

function specToOption(spec: ReaderSpec): ReaderOption {
  if (spec.kind === 'adaptive')
    return {
      adaptive: {
        min: spec.min,
        max: spec.max,
        poll: spec.poll === 'loopback' ? spec.poll : spec.poll / 1000,
      },
    };
  if (spec.kind === 'fixed') return { fixed: spec.size };
  return 'data';
}

const READER_EXPECTED = 'adaptive, adaptive:min=SIZE,max=SIZE,poll=DURATION, fixed:SIZE or data';
/** A reader may poll for at most 1 ms after its last read (the kernel's busy_read takes µs too). */
const POLL_MAX_US = 1000;

/** `--reader adaptive | adaptive:min=SIZE,max=SIZE,poll=DURATION | fixed:SIZE | data` → a resolved spec. */
export function parseReader(value: string, option = 'reader'): ReaderSpec {
  const v = value.trim();
  const bad = (): never => {
    throw UsageError.invalid(option, value, READER_EXPECTED);
  };
  if (v === 'adaptive' || v === 'data') return resolveReader(v, option);
  const fixed = /^fixed:(.+)$/.exec(v);
  if (fixed) return resolveReader({ fixed: parseSize(fixed[1], option) }, option);
  const adaptive = /^adaptive:(.+)$/.exec(v);
  if (!adaptive) return bad();
  const bounds: { min?: number; max?: number; poll?: string } = {};
  for (const part of adaptive[1].split(',')) {
    const kv = /^(min|max|poll)=(.+)$/.exec(part.trim());
    if (!kv || bounds[kv[1] as 'min' | 'max' | 'poll'] !== undefined) return bad();
    if (kv[1] === 'poll') bounds.poll = kv[2] === '0' ? '0s' : kv[2];
    else bounds[kv[1] as 'min' | 'max'] = parseSize(kv[2], option);
  }
  return resolveReader({ adaptive: bounds }, option);
}

/** The spec as the CLI spells it: `adaptive:min=512,max=262144` (`,poll=200us` when a bound was set), `fixed:65536`, `data`. */
export function formatReader(spec: ReaderSpec): string {
  if (spec.kind === 'adaptive')
    return `adaptive:min=${spec.min},max=${spec.max}${spec.poll === 'loopback' ? '' : `,poll=${spec.poll}us`}`;
  if (spec.kind === 'fixed') return `fixed:${spec.size}`;
  return 'data';
}

/**
 * How long a reader polls after its last read while a stream is hot (µs; 0: never). By default only a
 * loopback peer's stream polls: there the sender pays for waking the reader (src/tcp/poll.ts), which is
 * what polling saves; from a NIC, the CPU taking its interrupts would, and we have not measured that.
 */
export function pollBound(spec: ReaderSpec, remoteAddress: string | undefined): number {
  if (spec.kind !== 'adaptive') return 0;
  if (spec.poll !== 'loopback') return spec.poll;
  return isLoopback(remoteAddress) ? POLL_DEFAULT_US : 0;
}

/** A monotonic clock in µs, for the prober (called once per epoch, not per read). */
const nowUs = (): number => performance.now() * 1000;

// ---- the shared buffer ----------------------------------------------------------------------------

/** One buffer for every adaptive reader in the process, as large as the largest max in use. */
class SharedReadBuffer {
  private buf = Buffer.alloc(0);
  private views = new Map<number, Buffer>();
  /** Counts reallocations: a reader whose size and generation are unchanged keeps its view. */
  generation = 0;

  /** A view of `size` bytes (cached: sizes come from a handful of doublings). */
  view(size: number): Buffer {
    let v = this.views.get(size);
    if (v === undefined) {
      if (size > this.buf.length) {
        // Sockets that were handed a view of the old buffer keep it alive until their next read.
        this.buf = Buffer.allocUnsafe(size);
        this.views.clear();
        this.generation++;
      }
      v = this.buf.subarray(0, size);
      this.views.set(size, v);
    }
    return v;
  }

  get bytes(): number {
    return this.buf.length;
  }
}

const shared = new SharedReadBuffer();

/** Bytes held by the process-wide read buffer (for the idle benchmark). */
export function sharedReadBufferBytes(): number {
  return shared.bytes;
}

// ---- stats ----------------------------------------------------------------------------------------

/** A reader's statistics: bytes, reads, the mean read and the buffer size now. */
export interface ReaderStats {
  reader: string;
  reads: number;
  bytes: number;
  /** Reads that filled the buffer. */
  fullReads: number;
  /** The size the next read goes into. */
  sizeBytes: number;
  /** Read-buffer bytes this socket holds by itself (0 for adaptive: the buffer is shared). */
  ownBufferBytes: number;
  grows: number;
  shrinks: number;
  meanReadBytes: number;
  /** Reads by size: `le` is the bucket's upper bound in bytes (a power of two), `reads` the count. */
  readSizeHistogram: { le: number; reads: number }[];
  /**
   * The adaptive reader's learned arm (src/tcp/probe.ts), once it has read: the cap on its read size,
   * whether it polls, and how many probes it ran and moves it made.
   */
  probe?: { capBytes: number; polling: boolean; probes: number; moves: number };
}

/** Receives each chunk synchronously; the view is only valid during the call. May throw to close. */
export type Consumer = (chunk: Uint8Array) => void;

/** Counts and sizes the reads of one socket. */
export class Reader {
  readonly spec: ReaderSpec;
  reads = 0;
  bytes = 0;
  fullReads = 0;
  /** Where the bytes go; replace it at any time (e.g. after a handshake). */
  consumer: Consumer = () => {};
  private readonly sizer: AdaptiveSizer | null;
  private readonly own: Buffer | null;
  private readonly hist = new Array<number>(33).fill(0);
  private probe: ReadProbe | null = null;
  private socket: net.Socket | null = null;

  constructor(spec: ReaderSpec) {
    this.spec = spec;
    this.sizer =
      spec.kind === 'adaptive'
        ? new AdaptiveSizer({ min: spec.min, max: spec.max })
        : spec.kind === 'fixed'
          ? AdaptiveSizer.pinned(spec.size)
          : null;
    this.own = spec.kind === 'fixed' ? Buffer.allocUnsafe(spec.size) : null;
  }

  /**
   * The `onread` option for a net.Socket, or undefined for the 'data' reader. Per read it does only
   * what it must (measured in scripts/drain-bench.ts): a read that filled its buffer is handed over as
   * the buffer itself (no view made), and the buffer function, which Node calls after every read, returns
   * nothing while the size and the shared buffer are unchanged (Node then keeps the buffer it has).
   */
  onread(): OnRead | undefined {
    const sizer = this.sizer;
    if (sizer === null) return undefined;
    const spec = this.spec;
    // decided at the first read, when the peer is known (a client's socket is attached before it connects)
    let poll = spec.kind !== 'adaptive' ? 0 : spec.poll === 'loopback' ? -1 : spec.poll;
    let polls = false;
    const callback = (n: number, buf: Uint8Array): boolean => {
      const full = n >= buf.length;
      this.count(n, full);
      sizer.record(n);
      if (poll < 0) poll = pollBound(spec, this.socket?.remoteAddress);
      if (spec.kind === 'adaptive') {
        if (this.probe === null) {
          this.probe = new ReadProbe({
            min: sizer.min,
            max: sizer.max,
            initial: Math.min(Math.max(PROBE_START_BYTES, sizer.min), sizer.max),
            canPoll: poll > 0,
          });
          sizer.limit(this.probe.arm.cap);
        }
        if (this.probe.read(n, buf.length, nowUs)) {
          sizer.limit(this.probe.current.cap);
          polls = this.probe.current.poll;
        }
      }
      if (polls) poller.read(n, poll);
      return this.deliver(full ? buf : buf.subarray(0, n));
    };
    if (this.own) return { buffer: this.own, callback };
    let size = 0;
    let generation = -1;
    return {
      buffer: () => {
        if (sizer.size === size && shared.generation === generation) return undefined;
        size = sizer.size;
        generation = shared.generation;
        return shared.view(size);
      },
      callback,
    };
  }

  /** Ties the reader to its socket: the 'data' path listens here; errors from the consumer close it. */
  attach(socket: net.Socket): void {
    this.socket = socket;
    if (this.sizer === null) {
      socket.on('data', (chunk: Buffer) => {
        this.count(chunk.length, chunk.length >= DATA_READ_BYTES);
        if (this.deliver(chunk) === false) socket.pause();
      });
    }
  }

  private count(n: number, full: boolean): void {
    this.reads++;
    this.bytes += n;
    if (full) this.fullReads++;
    this.hist[n <= 1 ? 0 : 32 - Math.clz32(n - 1)]++;
  }

  private deliver(chunk: Uint8Array): boolean {
    try {
      this.consumer(chunk);
      return true;
    } catch (err) {
      this.socket?.destroy(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  stats(): ReaderStats {
    const s = this.sizer;
    return {
      reader: formatReader(this.spec),
      reads: this.reads,
      bytes: this.bytes,
      fullReads: this.fullReads,
      sizeBytes: s ? s.size : DATA_READ_BYTES,
      ownBufferBytes: this.own ? this.own.length : 0,
      grows: s ? s.grows : 0,
      shrinks: s ? s.shrinks : 0,
      meanReadBytes: this.reads ? this.bytes / this.reads : 0,
      readSizeHistogram: this.hist.flatMap((reads, i) => (reads ? [{ le: 2 ** i, reads }] : [])),
      ...(this.probe && {
        probe: {
          capBytes: this.probe.arm.cap,
          polling: this.probe.arm.poll,
          probes: this.probe.probes,
          moves: this.probe.moves,
        },
      }),
    };
  }
}
