// Errors with context (issue 44, item 6): a failure that came from the peer, said the same way by
// every end (blast and sink, TCP and UDP, remote's control connection, bench's end programs). One
// line: what this end was doing and with whom (`sending to the sink at 127.0.0.1:5201`), the
// system's own words (`write ECONNRESET`), what had moved by then, and the likely cause where the
// error code says it (`the sink reset the connection …`). Pure: no socket in sight.
import { EnvironmentError, PeerError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { formatDuration, formatSize } from '../policy/units.js';

/** The codes by which a peer, or the way to it, ends a connection or refuses one. */
const PEER_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
]);

/** What each code most likely means, the peer named by its role (`sink`, `sender`, `far end`). */
const CAUSES: Record<string, (peer: string) => string> = {
  ECONNRESET: (p) => `the ${p} reset the connection (it exited, or closed with bytes unread)`,
  EPIPE: (p) => `the ${p} closed the connection while this end was still sending`,
  ECONNABORTED: (p) => `the ${p}'s side aborted the connection`,
  ECONNREFUSED: (p) => `nothing listens there (is the ${p} running, on that port?)`,
  ETIMEDOUT: (p) => `no answer from the ${p}'s host (down, or a firewall drops the packets)`,
  EHOSTUNREACH: (p) => `no route to the ${p}'s host`,
  ENETUNREACH: (p) => `no route to the ${p}'s network`,
  EHOSTDOWN: (p) => `the ${p}'s host is down`,
};

/**
 * A sink that refuses a hello (a serve far end, no secret sent) does so at once, having read little: a
 * failure this soon and this small is likely that. Loopback moves ~1 GiB/s: a reset at 1.5 s came after
 * 1.7 GiB, a refused hello after a few MiB at most (the sink's receive buffer).
 */
const REFUSED_WITHIN = { seconds: 2, bytes: 64 * 2 ** 20 } as const;

/** The likely cause of a blast's early failure when it sent no secret, or undefined when it is not that. */
export function refusedHello(noSecret: boolean, seconds: number, bytes: number): string | undefined {
  return noSecret && seconds < REFUSED_WITHIN.seconds && bytes < REFUSED_WITHIN.bytes
    ? "the far end refused: set SOCKBUF_SECRET (a sockbuf serve far end closes a connection whose hello lacks the test's secret; remote's ready line gives it)"
    : undefined;
}

/** Where a failure happened: the peer, by role and address, and what this end was doing with it. */
export interface PeerContext {
  /** The peer's role, as the cause names it: `sink`, `sender`, `receiver`, `far end`, `sockbuf serve`. */
  peer: string;
  /** The peer's address, when known. */
  at?: HostPort;
  /** What this end was doing, said before the peer: `sending to`, `receiving from`, `waiting for the results of`. */
  doing: string;
  /** What had moved by the failure. */
  moved?: { bytes: number; seconds: number; streams?: number };
  /** A cause the caller knows better than the code does (a refused hello); replaces the code's. */
  cause?: string;
  /** The failure in words when not the error's own message (a connect: just its code). */
  said?: string;
}

/** The system error code of `err` or of its first cause that has one. */
export function errorCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; i++) {
    if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e.code;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** Whether `err` is the peer's doing (a reset, a close, a refusal, a peer that broke its protocol). */
export function fromPeer(err: unknown): boolean {
  if (err instanceof PeerError) return true;
  const code = errorCode(err);
  return code !== undefined && PEER_CODES.has(code);
}

/** The likely cause of `code`, the peer named by `peer`, or undefined when the code says none. */
export function likelyCause(code: string | undefined, peer: string): string | undefined {
  return code === undefined ? undefined : CAUSES[code]?.(peer);
}

/** `sending to the sink at 127.0.0.1:5201` (or `… the sink` when its address is not known). */
export function peerDoing(ctx: Pick<PeerContext, 'peer' | 'at' | 'doing'>): string {
  return `${ctx.doing} the ${ctx.peer}${ctx.at ? ` at ${formatHostPort(ctx.at)}` : ''}`;
}

/**
 * The one line for a failure from the peer: `DOING the PEER at ADDR: MESSAGE after BYTES in SECONDS over
 * N stream(s); CAUSE`. `what` is the failure as the system said it (an Error's message).
 */
export function peerFailureText(what: string | Error, ctx: PeerContext): string {
  const message = ctx.said ?? (typeof what === 'string' ? what : what.message);
  const m = ctx.moved;
  const moved = m
    ? ` after ${formatSize(m.bytes)} in ${formatDuration(m.seconds)}${m.streams === undefined ? '' : ` over ${m.streams} stream(s)`}`
    : '';
  const cause = ctx.cause ?? likelyCause(errorCode(what), ctx.peer);
  return `${peerDoing(ctx)}: ${message}${moved}${cause ? `; ${cause}` : ''}`;
}

/**
 * `err` said with its context, when it is the peer's doing (fromPeer): an EnvironmentError stays one
 * (its code kept: a refused connect exits 3), anything else becomes a PeerError; `err` is the cause.
 * Any other error is returned as it is.
 */
export function peerFailure(err: unknown, ctx: PeerContext): unknown {
  if (!fromPeer(err) && ctx.cause === undefined) return err;
  const text = peerFailureText(err as Error, ctx);
  return err instanceof EnvironmentError
    ? new EnvironmentError(text, { cause: err, code: err.code })
    : new PeerError(text, { cause: err });
}
