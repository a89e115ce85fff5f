// The reader option, parsed and resolved (what src/tcp/reader.ts reads with): 'adaptive' (seed 002's
// adaptive reader, the default), a fixed size, or Node's plain 'data' path; and the constants behind it.
import { UsageError } from '../errors.js';
import { isLoopback } from '../policy/address.js';
import { durationMs, parseSize } from '../policy/units.js';
import { POLL_DEFAULT_US } from './poll.js';
import { checkSizerBounds, SIZER_MAX_BYTES, SIZER_MIN_BYTES } from './sizer.js';

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
