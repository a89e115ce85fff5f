// A small seeded PRNG (sfc32) and generators for fuzzing. Same seed, same sequence, on every machine.

/** FNV-1a over a string: turns a seed and an input index into a 32-bit state word. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** One generator per (seed, index), so any single input can be replayed on its own. */
  constructor(seed: string | number, index = 0) {
    const s = `${seed}/${index}`;
    this.a = hash32(`a${s}`);
    this.b = hash32(`b${s}`);
    this.c = hash32(`c${s}`);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** sfc32: a uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.u32() / 2 ** 32) * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** A length that is usually small and sometimes large: fuzzers find more with short inputs. */
  length(max: number): number {
    const r = this.int(4);
    if (r === 0) return this.int(Math.min(8, max + 1));
    if (r === 1) return this.int(Math.min(64, max + 1));
    return this.int(max + 1);
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }

  /** A string of `n` characters drawn from `alphabet`. */
  stringFrom(alphabet: string, n: number): string {
    const chars = [...alphabet];
    let s = '';
    for (let i = 0; i < n; i++) s += chars[this.int(chars.length)];
    return s;
  }

  /** One of the edge integers a decoder must survive in a length or count field. */
  edgeU32(cap = 0): number {
    const edges = [
      0, 1, 2, 3, 4, 7, 8, 255, 256, 65535, 65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
    ];
    if (cap > 0) edges.push(cap - 1, cap, cap + 1);
    return this.chance(0.7) ? this.pick(edges) : this.u32();
  }
}

const NASTY = [
  '',
  ' ',
  '\t',
  '\n',
  '\0',
  '-',
  '+',
  '.',
  ',',
  ':',
  '[',
  ']',
  'e',
  'E',
  'Infinity',
  'NaN',
  '0x',
  '%',
  '/',
  '\u00b5',
  '\u{1F4A9}',
  '\ud800',
  '１',
];

/** Mutates a valid example: insert, delete, replace, duplicate or splice characters. */
export function mutateString(rng: Rng, s: string, pieces: readonly string[] = NASTY): string {
  let out = s;
  const n = rng.range(1, 4);
  for (let k = 0; k < n; k++) {
    const i = rng.int(out.length + 1);
    switch (rng.int(6)) {
      case 0:
        out = out.slice(0, i) + rng.pick(pieces) + out.slice(i);
        break;
      case 1:
        out = out.slice(0, i) + out.slice(i + rng.range(1, 3));
        break;
      case 2:
        out = out.slice(0, i) + rng.stringFrom('0123456789.kKmMgGbBiIsS%:[]', 1) + out.slice(i + 1);
        break;
      case 3:
        out = out.slice(0, i) + out.slice(i, i + rng.range(1, 8)).repeat(rng.range(2, 50)) + out.slice(i);
        break;
      case 4:
        out = out.slice(0, i) + rng.stringFrom('0123456789', rng.range(1, 400)) + out.slice(i);
        break;
      default:
        out = out.slice(0, i) + String.fromCharCode(rng.int(0x10000)) + out.slice(i);
    }
  }
  return out;
}

/** Mutates a valid encoding: flip bits, overwrite with edge integers, truncate, extend, splice. */
export function mutateBytes(rng: Rng, b: Buffer, cap = 0): Buffer {
  let out = Buffer.from(b);
  const n = rng.range(1, 4);
  for (let k = 0; k < n; k++) {
    const i = rng.int(Math.max(1, out.length));
    switch (rng.int(5)) {
      case 0:
        if (out.length) out[i] ^= 1 << rng.int(8);
        break;
      case 1:
        if (out.length >= 4) out.writeUInt32LE(rng.edgeU32(cap), Math.min(i, out.length - 4));
        break;
      case 2:
        if (out.length >= 2) out.writeUInt16LE(rng.edgeU32(cap) & 0xffff, Math.min(i, out.length - 2));
        break;
      case 3:
        out = out.subarray(0, rng.int(out.length + 1));
        break;
      default:
        out = Buffer.concat([out.subarray(0, i), rng.bytes(rng.length(64)), out.subarray(i)]);
    }
  }
  return out;
}
