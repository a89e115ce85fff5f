// The fuzz harness: runs a target over seeded, reproducible inputs and checks three properties —
// it throws nothing but its documented error type, it returns what it promises (`check`), and no
// single allocation during a call exceeds the target's bound (a decoder must cap a claimed length
// before it allocates, never after). Hangs: the suite's per-test timeout in `npm test`, a watchdog
// worker in `npm run fuzz` (test/fuzz/run.ts), which names the seed and index that hung.
import { getHeapStatistics } from 'node:v8';
import { Rng } from './prng.js';

export interface Target<T = unknown> {
  name: string;
  generate(rng: Rng): T;
  /** Calls the code under test. */
  run(input: T): unknown;
  /** The documented error types; anything else thrown is a failure. */
  allowed(err: unknown): boolean;
  /** Properties of a successful result; throw to fail. */
  check?(input: T, output: unknown): void;
  /** Inputs in `npm test` when fewer than the default suit it (each input is large). */
  testCount?: number;
  /** The largest single Buffer allocation a call may make for this input (default 1 MiB). */
  maxAllocBytes?(input: T): number;
}

export interface Failure {
  target: string;
  seed: string;
  index: number;
  input: string;
  problem: string;
}

export interface FuzzReport {
  target: string;
  seed: string;
  runs: number;
  rejected: number;
  maxAllocBytes: number;
  failures: Failure[];
}

export interface FuzzOptions {
  seed?: string;
  count?: number;
  seconds?: number;
  first?: number;
  /** Called before each input (the watchdog's heartbeat). */
  onInput?(index: number): void;
  maxFailures?: number;
}

type AllocFn = (size: number, ...rest: never[]) => Buffer;

const external = () => getHeapStatistics().external_memory;

const TYPED = ['Uint8Array', 'ArrayBuffer'] as const;

/**
 * The most memory one call took: the largest Buffer.alloc*, `new Uint8Array(n)` or
 * `new ArrayBuffer(n)` asked for while `fn` runs (the globals are wrapped for the call), or the
 * growth of external memory across the call if that is larger (it catches other allocations, though
 * a GC during the call can make it look smaller, never larger).
 */
export function measureAllocations<R>(fn: () => R): { result?: R; error?: unknown; maxBytes: number } {
  const B = Buffer as unknown as Record<'alloc' | 'allocUnsafe' | 'allocUnsafeSlow', AllocFn>;
  const saved = { alloc: B.alloc, allocUnsafe: B.allocUnsafe, allocUnsafeSlow: B.allocUnsafeSlow };
  const g = globalThis as unknown as Record<string, unknown>;
  const savedTyped = TYPED.map((k) => g[k]);
  let maxBytes = 0;
  const note = (size: unknown) => {
    if (typeof size === 'number' && size > maxBytes) maxBytes = size;
  };
  const before = external();
  for (const k of ['alloc', 'allocUnsafe', 'allocUnsafeSlow'] as const) {
    const orig = saved[k];
    B[k] = ((size: number, ...rest: never[]) => {
      note(size);
      return orig.call(Buffer, size, ...rest);
    }) as AllocFn;
  }
  TYPED.forEach((k, i) => {
    g[k] = new Proxy(savedTyped[i] as new (...a: unknown[]) => object, {
      construct(target, args, newTarget) {
        note(args[0]);
        return Reflect.construct(target, args, newTarget === g[k] ? target : newTarget);
      },
    });
  });
  const grown = () => Math.max(maxBytes, external() - before);
  try {
    const result = fn();
    return { result, maxBytes: grown() };
  } catch (error) {
    return { error, maxBytes: grown() };
  } finally {
    Object.assign(B, saved);
    TYPED.forEach((k, i) => {
      g[k] = savedTyped[i];
    });
  }
}

export function describe(input: unknown): string {
  if (Buffer.isBuffer(input)) {
    const hex = input.subarray(0, 96).toString('hex');
    return `Buffer(${input.length}) ${hex}${input.length > 96 ? '…' : ''}`;
  }
  // Buffer.toJSON runs before the replacer: {type:'Buffer', data:[…]}
  const short = (_k: string, v: unknown) => {
    const b = v as { type?: unknown; data?: unknown };
    return b && b.type === 'Buffer' && Array.isArray(b.data) ? `<Buffer ${b.data.length}>` : v;
  };
  const s = JSON.stringify(input, short) ?? String(input);
  return s.length > 300 ? `${s.slice(0, 300)}… (${s.length} chars)` : s;
}

function why(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : `non-Error thrown: ${String(err)}`;
}

export function fuzz<T>(target: Target<T>, opts: FuzzOptions = {}): FuzzReport {
  const seed = opts.seed ?? 'sockbuf';
  const count = opts.count ?? 10_000;
  const deadline = opts.seconds === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.seconds * 1000;
  const maxFailures = opts.maxFailures ?? 5;
  const report: FuzzReport = {
    target: target.name,
    seed,
    runs: 0,
    rejected: 0,
    maxAllocBytes: 0,
    failures: [],
  };
  const first = opts.first ?? 0;
  for (let index = first; index < first + count; index++) {
    if ((index & 63) === 0 && Date.now() > deadline) break;
    opts.onInput?.(index);
    const input = target.generate(new Rng(seed, index));
    const fail = (problem: string) =>
      report.failures.push({ target: target.name, seed, index, input: describe(input), problem });
    const m = measureAllocations(() => target.run(input));
    report.runs++;
    report.maxAllocBytes = Math.max(report.maxAllocBytes, m.maxBytes);
    if ('error' in m && m.error !== undefined) {
      if (target.allowed(m.error)) {
        report.rejected++;
        if (!(m.error instanceof Error) || !m.error.message) fail(`documented error without a message`);
      } else fail(`threw ${why(m.error)}`);
    } else {
      try {
        target.check?.(input, m.result);
      } catch (err) {
        fail(`property failed: ${why(err)}`);
      }
    }
    const limit = target.maxAllocBytes?.(input) ?? 1 << 20;
    if (m.maxBytes > limit) fail(`allocated ${m.maxBytes} bytes in one call (bound ${limit})`);
    if (report.failures.length >= maxFailures) break;
  }
  return report;
}

/** One line per failure, with what it takes to replay it. */
export function formatFailures(report: FuzzReport): string {
  return report.failures
    .map(
      (f) =>
        `${f.target} seed=${f.seed} index=${f.index}: ${f.problem}\n  input: ${f.input}\n  replay: npm run fuzz -- --target ${f.target} --seed ${f.seed} --first ${f.index} --count 1`,
    )
    .join('\n');
}
