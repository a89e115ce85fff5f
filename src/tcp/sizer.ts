import { UsageError } from '../errors.js';
// The adaptive read-buffer rule of seed 002, as a pure class (Netty's AdaptiveCalculator role):
// no socket in sight. The reader asks `size` before a read and tells `record(n)` after it.
//
// - A read that fills the buffer doubles it, up to `max`.
// - Every read feeds an EWMA of read sizes with weight 1/8, in integer arithmetic (kept scaled by 8,
//   the way the kernel keeps srtt: avg8 += n - avg8/8).
// - When the EWMA falls below a quarter of the buffer, the buffer halves, down to `min`.
// - `fixed` pins the size: it never changes.
// - `limit(cap)` (at most `max`) bounds the growth for now: the reader's prober (src/tcp/probe.ts) moves it.
// After a one-off burst the EWMA decays by 7/8 per small read, so the first halving comes within a few
// reads, and from then on each read halves the buffer until it is back within 4 × the EWMA.

/** Bounds that make sense for a userspace read buffer: at least 64 bytes, at most 256 MiB. */
export const SIZER_MIN_BYTES = 64;
export const SIZER_MAX_BYTES = 256 * 1024 * 1024;

export interface SizerBounds {
  min: number;
  max: number;
  /** The size of the first read; defaults to `min`. */
  initial?: number;
}

/** The adaptive read-buffer size (seed 002): a full read doubles it, an EWMA of reads below a quarter halves it. */
export class AdaptiveSizer {
  readonly min: number;
  readonly max: number;
  readonly fixed: boolean;
  #size: number;
  #ceiling: number;
  #grows = 0;
  #shrinks = 0;
  /** EWMA of read sizes × 8. */
  private avg8: number;

  /** A sizer within `bounds` (min = max: fixed), starting at `initial` (default min); a UsageError naming `reader` for bounds a reader cannot take. */
  constructor(bounds: SizerBounds) {
    const { min, max } = bounds;
    checkSizerBounds(min, max);
    this.min = min;
    this.max = max;
    this.fixed = min === max;
    const initial = bounds.initial ?? min;
    if (!(initial >= min && initial <= max))
      throw new UsageError(
        (n) => `invalid value for ${n('reader')}: initial ${initial} is outside ${min}..${max}`,
        'reader',
        { value: String(initial), expected: `${min} to ${max} bytes` },
      );
    this.#size = initial;
    this.#ceiling = max;
    this.avg8 = initial * 8; // until reads say otherwise, assume they fill the buffer
  }

  /** A sizer that never changes: `{ fixed: size }`. */
  static pinned(size: number): AdaptiveSizer {
    return new AdaptiveSizer({ min: size, max: size });
  }

  /** The size to read into next. */
  get size(): number {
    return this.#size;
  }

  /** How far the size may grow for now (min..max; default max; see limit). */
  get ceiling(): number {
    return this.#ceiling;
  }

  /** Bounds the growth to `cap` (clamped to min..max); a size above it comes down to it at once. */
  limit(cap: number): void {
    if (this.fixed) return;
    this.#ceiling = Math.min(Math.max(cap, this.min), this.max);
    if (this.#size > this.#ceiling) this.#size = this.#ceiling;
  }

  /** How many times the size doubled. */
  get grows(): number {
    return this.#grows;
  }

  /** How many times the size halved. */
  get shrinks(): number {
    return this.#shrinks;
  }

  /** The EWMA of read sizes, in bytes. */
  get average(): number {
    return this.avg8 >>> 3;
  }

  /** Records a read of `n` bytes into a buffer of `this.size` bytes, and adapts the size. */
  record(n: number): void {
    this.avg8 = (this.avg8 + n - (this.avg8 >>> 3)) >>> 0;
    if (this.fixed) return;
    if (n >= this.#size) {
      if (this.#size < this.#ceiling) {
        this.#size = Math.min(this.#size * 2, this.#ceiling);
        this.#grows++;
      }
    } else if (this.avg8 >>> 3 < this.#size >>> 2 && this.#size > this.min) {
      this.#size = Math.max(this.#size >>> 1, this.min);
      this.#shrinks++;
    }
  }
}

/** Throws a UsageError unless min ≤ max, both within SIZER_MIN_BYTES..SIZER_MAX_BYTES. */
export function checkSizerBounds(min: number, max: number, option = 'reader'): void {
  for (const [name, v] of [
    ['min', min],
    ['max', max],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < SIZER_MIN_BYTES || v > SIZER_MAX_BYTES)
      throw new UsageError(
        (n) =>
          `invalid value for ${n(option)}: ${name}=${v} (expected a size from ${SIZER_MIN_BYTES} to ${SIZER_MAX_BYTES} bytes)`,
        option,
      );
  }
  if (max < min)
    throw new UsageError((n) => `invalid value for ${n(option)}: max=${max} is below min=${min}`, option);
}
