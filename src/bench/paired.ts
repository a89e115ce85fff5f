// Paired ratios and their intervals (issue 45): on a shared, noisy host two readers' rates are compared
// round by round (the same round's baseline ran next to it, so a slow spell of the host weighs on both),
// and judged by the median of the per-round ratios with a distribution-free 90 % interval from order
// statistics (the interval between the k-th smallest and the k-th largest ratio covers the true median
// with probability 1 − 2·P(Binomial(n, ½) < k)). A ratio whose interval reaches further than ±20 % of
// its median gets no verdict: "too noisy, rerun". Pure.

/** An interval reaching further than this share of its median from it: too noisy to judge. */
export const NOISE_BOUND = 0.2;
/** The interval's coverage. */
export const INTERVAL_LEVEL = 0.9;

export interface MedianInterval {
  median: number;
  /** The interval's ends: order statistics k and n + 1 − k (1-based). */
  lo: number;
  hi: number;
  /** Its coverage (≥ the level asked for; 0 when too few values give any). */
  level: number;
  n: number;
}

function median(s: number[]): number {
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** P(Binomial(n, ½) ≤ k). */
function binomialCdf(n: number, k: number): number {
  let term = 0.5 ** n;
  let sum = 0;
  for (let i = 0; i <= k; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

/**
 * The median of `values` and the narrowest order-statistic interval around it whose coverage is at
 * least `level` (for 9 values and 90 %: the 2nd smallest to the 2nd largest, 96 %). With too few
 * values for any (fewer than 5 at 90 %), the interval is the whole range and `level` says what it covers.
 */
export function medianInterval(values: number[], level = INTERVAL_LEVEL): MedianInterval {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { median: Number.NaN, lo: Number.NaN, hi: Number.NaN, level: 0, n };
  let k = 1; // the widest: min to max
  for (let j = 1; j <= n >> 1; j++) {
    if (1 - 2 * binomialCdf(n, j - 1) >= level) k = j;
    else break;
  }
  return { median: median(s), lo: s[k - 1], hi: s[n - k], level: 1 - 2 * binomialCdf(n, k - 1), n };
}

/** Round by round, a ÷ b (the i-th value of each is the same round's). */
export function perRound(a: number[], b: number[]): number[] {
  const n = Math.min(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(a[i] / b[i]);
  return out;
}

export type RatioVerdict = 'met' | 'not met' | 'too noisy';

export interface JudgedRatio extends MedianInterval {
  goal: number;
  verdict: RatioVerdict;
}

/** Whether the interval stays within ±NOISE_BOUND of the median. */
export function tightEnough(m: MedianInterval): boolean {
  return m.n > 0 && m.lo >= m.median * (1 - NOISE_BOUND) && m.hi <= m.median * (1 + NOISE_BOUND);
}

/** The per-round ratios judged against `goal` (median ≥ goal), unless their interval is too wide. */
export function judgeRatio(ratios: number[], goal: number): JudgedRatio {
  const m = medianInterval(ratios);
  const verdict: RatioVerdict = !tightEnough(m) ? 'too noisy' : m.median >= goal ? 'met' : 'not met';
  return { ...m, goal, verdict };
}

/** `0.93 [0.88–1.01]`: the median and its interval. */
export function formatInterval(m: MedianInterval): string {
  return `${m.median.toFixed(2)} [${m.lo.toFixed(2)}–${m.hi.toFixed(2)}]`;
}

/** `0.93 [0.88–1.01] ≥ 0.90: met` (or `too noisy, rerun`). */
export function formatJudged(j: JudgedRatio): string {
  const v = j.verdict === 'too noisy' ? 'too noisy, rerun' : j.verdict === 'met' ? 'met' : 'NOT met';
  return `${formatInterval(j)} (goal ≥ ${j.goal.toFixed(2)}): ${v}`;
}
