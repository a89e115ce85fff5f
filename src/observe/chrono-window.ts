// The exporter's ratios over a window longer than a burst: busy time and the rwnd- and sndbuf-limited
// shares of it from tcp_info's chrono counters, between now and a mark one to two windows old (the
// previous scrape's, where scrapes are further apart). Over one scrape interval a socket that sends
// in bursts every 3 s reads busy 0 on every quiet 2 s scrape, and an alert that asks for load (busy
// ratio above 10 %) then never holds for its `for:` (issue 44). Pure: samples in, figures out.
import { IPPROTO_TCP } from '../sys/constants.js';
import type { InspectedSocket } from './analyze.js';
import type { DiagSocket } from './sockdiag.js';

/** The window: 60 s, so the figures cover 60-120 s (or the scrape interval, when longer). */
export const RATIO_WINDOW_MS = 60_000;

interface Mark {
  at: number;
  busy: number;
  rwnd: number;
  sndbuf: number;
}

/** A socket's figures over the window. */
export interface WindowFigures {
  /** Share of the window busy sending, in [0, 1]. */
  busyRatio: number;
  /** Shares of that busy time limited by the peer's window and by the send buffer, in % (as analyze's). */
  rwndLimitedPct: number;
  sndbufLimitedPct: number;
  seconds: number;
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);

/**
 * Two marks per TCP socket (by cookie): the older one starts the window; the newer one takes its place
 * once it is `windowMs` old. A socket not in a sample is forgotten.
 */
export class ChronoWindow {
  private marks = new Map<string, { a: Mark; b: Mark }>();
  constructor(private readonly windowMs = RATIO_WINDOW_MS) {}

  /** Records each socket's counters at `at` (ms) and returns, by cookie, its figures over the window. */
  update(sockets: readonly DiagSocket[], at: number): Map<string, WindowFigures> {
    const out = new Map<string, WindowFigures>();
    const next = new Map<string, { a: Mark; b: Mark }>();
    for (const s of sockets) {
      const t = s.tcpInfo;
      if (s.protocol !== IPPROTO_TCP || t?.busyTime === undefined || s.stateName === 'listen') continue;
      const now = { at, busy: t.busyTime, rwnd: t.rwndLimited ?? 0, sndbuf: t.sndbufLimited ?? 0 };
      const had = this.marks.get(s.cookie);
      const m = had ? (at - had.b.at >= this.windowMs ? { a: had.b, b: now } : had) : { a: now, b: now };
      next.set(s.cookie, m);
      const seconds = (at - m.a.at) / 1000;
      if (seconds <= 0) continue;
      const busy = Math.max(0, now.busy - m.a.busy);
      out.set(s.cookie, {
        busyRatio: Math.min(1, busy / 1e6 / seconds),
        rwndLimitedPct: pct(Math.max(0, now.rwnd - m.a.rwnd), busy),
        sndbufLimitedPct: pct(Math.max(0, now.sndbuf - m.a.sndbuf), busy),
        seconds,
      });
    }
    this.marks = next;
    return out;
  }

  /** update(), and each row's busyRatio, rwndLimitedPct and sndbufLimitedPct replaced by the window's. */
  apply(rows: InspectedSocket[], sockets: readonly DiagSocket[], at: number): void {
    const win = this.update(sockets, at);
    for (const r of rows) {
      const w = win.get(r.cookie);
      if (w)
        Object.assign(r, {
          busyRatio: w.busyRatio,
          rwndLimitedPct: w.rwndLimitedPct,
          sndbufLimitedPct: w.sndbufLimitedPct,
        });
    }
  }
}
