// What `serve` hands a far end it starts (sink tcp, sink udp): the test's secret and the caps the far
// end enforces itself, as JSON in one environment variable (never argv, where `ps` shows it).

import { UsageError } from '../errors.js';
import { parseBoundedJson } from '../policy/json.js';

/**
 * What `serve` tells a far end through its environment (SOCKBUF_FAR_END, never argv): the test's secret
 * and the server's caps, which the far end enforces itself.
 */
export interface FarEndLimits {
  secret: string;
  /** Bytes received and sent, all connections together. */
  maxBytes: number;
  /** From the far end's start. */
  maxSeconds: number;
  /** The largest frame payload (hello size, echoed frame). */
  maxFrame: number;
  /** Connections of the test. */
  maxStreams: number;
  /** The client's address as the control connection saw it (a UDP far end counts only its datagrams). */
  peer?: string;
}

/** The environment variable that carries FarEndLimits (JSON) from serve to its far end. */
export const FAR_END_ENV = 'SOCKBUF_FAR_END';

/** Reads FAR_END_ENV; throws a UsageError naming what is wrong (a far end must not start without its caps). */
export function parseFarEnd(text: string): FarEndLimits {
  let v: Partial<FarEndLimits>;
  try {
    v = parseBoundedJson(text) as Partial<FarEndLimits>;
  } catch {
    throw new UsageError(`${FAR_END_ENV} is not JSON`, FAR_END_ENV);
  }
  const pos = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (
    !v ||
    typeof v !== 'object' ||
    typeof v.secret !== 'string' ||
    v.secret.length < 16 ||
    !pos(v.maxBytes) ||
    !pos(v.maxSeconds) ||
    !pos(v.maxFrame) ||
    !pos(v.maxStreams)
  )
    throw new UsageError(
      `${FAR_END_ENV} lacks the secret or a cap (maxBytes, maxSeconds, maxFrame, maxStreams)`,
      FAR_END_ENV,
    );
  return {
    secret: v.secret,
    maxBytes: v.maxBytes as number,
    maxSeconds: v.maxSeconds as number,
    maxFrame: v.maxFrame as number,
    maxStreams: v.maxStreams as number,
    ...(typeof v.peer === 'string' && v.peer.length <= 64 ? { peer: v.peer } : {}),
  };
}

/**
 * The far end's limits when `sockbuf serve` started this process (FAR_END_ENV set), else undefined.
 * A value that does not parse is a UsageError: a far end must not start without its caps.
 */
export function farEndFromEnv(env: NodeJS.ProcessEnv = process.env): FarEndLimits | undefined {
  const text = env[FAR_END_ENV];
  if (!text) return undefined;
  try {
    return parseFarEnd(text);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
