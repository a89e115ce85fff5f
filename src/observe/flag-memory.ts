// Flags across samples: what the exporter and `inspect --watch` show between two findings. The rules
// (analyze.ts) judge one interval; a socket whose traffic comes in bursts further apart than the
// interval would lose its flag, and with it its series, on every quiet sample (issue 44: bursts every
// 3 s, 2 s scrapes, 42 transitions in 104 samples), so a `for: 10m` alert never fired for it.
import { FLAG_KINDS, type Flag, type FlagKind, type InspectedSocket } from './analyze.js';

/**
 * How long a pinned-buffer flag is held after its last finding while the socket is open and the pin
 * is still there: 15 minutes, longer than the shipped rules' `for: 10m`, so that a socket limited by
 * its pin in bursts stays flagged between them. A held flag ends earlier when the socket closes or its
 * buffer changes (a pin removed, or autotuning grew it: then it was never pinned).
 */
export const PIN_HOLD_MS = 15 * 60_000;

/** The kinds whose evidence is a buffer pinned for the connection's life: held for PIN_HOLD_MS. */
const PINNED: ReadonlySet<FlagKind> = new Set(['pinned-rcvbuf', 'pinned-sndbuf', 'rwnd-limited']);

/** The buffer a pinned kind's hold watches, as the row shows it (skmem rb, tb; the peer's window scale). */
function pin(kind: FlagKind, r: InspectedSocket): number | undefined {
  if (kind === 'pinned-rcvbuf') return r.rcvbufBytes;
  if (kind === 'pinned-sndbuf') return r.sndbufBytes;
  return r.sndWscale; // rwnd-limited: the peer's pin shows in the scale it offered at the handshake
}

interface Held {
  flag: Flag;
  /** Samples since the last finding (the short hold of the other kinds). */
  missed: number;
  /** When it was last found, and the pinned buffer then (undefined: no long hold). */
  foundAt: number;
  pin?: number;
}

/**
 * Hysteresis across samples. A pinned-buffer flag (pinned-rcvbuf, pinned-sndbuf, rwnd-limited) found
 * over an interval, that the rules do not raise again, stays on, marked as held, for up to PIN_HOLD_MS
 * after its last finding while its socket is open and the buffer is the one it was found with, idle
 * or not. Any other flag
 * (a stalled reader, UDP drops, sndbuf-limited) stays on for up to `misses` samples while its socket
 * still moves data; idle, it loses it at once. A socket limited at a steady rate then stays flagged
 * across scrapes where one sample fell on a quiet instant (issue 36: 8 of 20 scrapes before), and a
 * pinned one between its bursts (issue 44).
 */
export class FlagMemory {
  private held = new Map<string, Held>();
  constructor(
    private readonly misses = 3,
    private readonly pinHoldMs = PIN_HOLD_MS,
  ) {}

  /** Adds the held flags to `rows` (in place) and remembers this sample's; `now` in ms (monotonic). */
  apply(rows: InspectedSocket[], now = performance.now()): void {
    const next = new Map<string, Held>();
    for (const r of rows) {
      const id = `${r.protocol}|${r.cookie}|`;
      // a finding over an interval starts the long hold; one over the connection's life (the first
      // sample: ss's view, where a burst at its start counts as load) only the short one
      const judged = r.intervalSeconds !== undefined;
      for (const f of r.flags)
        next.set(id + f.kind, { flag: f, missed: 0, foundAt: now, pin: judged ? pin(f.kind, r) : undefined });
      const moving = (r.sentBytesPerSecond ?? 0) > 0 || (r.receivedBytesPerSecond ?? 0) > 0;
      for (const kind of FLAG_KINDS) {
        const h = this.held.get(id + kind);
        if (!h || next.has(id + kind)) continue;
        const pinned =
          PINNED.has(kind) &&
          h.pin !== undefined &&
          pin(kind, r) === h.pin &&
          now - h.foundAt < this.pinHoldMs;
        if (!pinned && (!moving || h.missed >= this.misses)) continue;
        const reason = h.flag.reason.startsWith('(held)') ? h.flag.reason : `(held) ${h.flag.reason}`;
        const flag = { kind, reason };
        r.flags.push(flag);
        r.limited = true;
        next.set(id + kind, { ...h, flag, missed: h.missed + 1 });
      }
    }
    this.held = next;
  }
}
