// What sink tcp reports of each connection: the state it keeps per connection, and the JSON lines it
// prints (an interval line while the connection moves, one line when it ends). Field names are
// sockbuf's JSON (docs/results-schema.json): keep them.
import type { HostPort } from '../policy/address.js';
import type { TcpConnection } from '../tcp/connection.js';
import type { FrameDecoder } from '../tcp/frame.js';
import type { ConnectionEvent, ConnectionIntervalEvent, EndEventFields } from './end-events.js';
import type { Hello, HelloDetector } from './hello.js';
import type { PatternVerifier } from './pattern.js';
import { fromPeer, peerFailureText } from './peer-failure.js';

export interface Conn {
  id: number;
  conn: TcpConnection;
  /** The peer's address, as it was at accept (a reset socket no longer says it). */
  from?: HostPort;
  hello?: Hello;
  /** Not a sockbuf connection: bytes counted, nothing decoded. */
  plain?: boolean;
  /** With verify: why this connection's bytes could not be checked (a plain stream). */
  unverified?: string;
  detector?: HelloDetector;
  verifier?: PatternVerifier;
  decoder?: FrameDecoder;
  /** Frames echoed (echo only). */
  echoed?: number;
  /** Why the sink itself closed it (a far end's refusal), if it did. */
  refused?: string;
  /** The sink was stopped at once (SIGINT/SIGTERM) while this connection was open: why. */
  interrupted?: string;
  sent: number;
  lastBytes: number;
  lastReads: number;
  /** socket.bytesWritten at the previous interval (echo and reverse connections move by writing). */
  lastWritten: number;
}

/**
 * The interval line of a connection that moved (read or wrote) since the previous interval `dt`
 * seconds ago, or undefined when it was idle. Moves the connection's marks to now.
 */
export function intervalLine(
  c: Conn,
  now: number,
  dt: number,
): EndEventFields<ConnectionIntervalEvent> | undefined {
  const r = c.conn.reader;
  const bytes = r.bytes - c.lastBytes;
  const reads = r.reads - c.lastReads;
  const written = c.conn.socket.bytesWritten - c.lastWritten;
  c.lastBytes = r.bytes;
  c.lastReads = r.reads;
  c.lastWritten += written;
  if (bytes === 0 && reads === 0 && written === 0) return undefined;
  const st = c.conn.intervalStats();
  return {
    conn: c.id,
    stream: c.hello?.stream,
    seconds: (now - c.conn.openedAt) / 1000,
    intervalSeconds: dt,
    bytes,
    bytesPerSecond: bytes / dt,
    reads,
    meanReadBytes: reads ? bytes / reads : 0,
    readerSizeBytes: st.reader.sizeBytes,
    ...(c.verifier ? { mismatches: c.verifier.mismatches } : {}),
    ...st,
  };
}

/** The line of a connection that ended after `seconds`, and what went wrong with it, if anything. */
export function connectionLine(
  c: Conn,
  seconds: number,
  echo: boolean,
): { line: EndEventFields<ConnectionEvent>; error?: string } {
  const st = c.conn.stats();
  const r = st.reader;
  const failure = c.conn.error;
  // the peer's failure (a reset, a close) said with whom and what this end was doing (peer-failure.ts)
  const sending = c.hello?.reverse === true || echo;
  let error =
    failure &&
    (fromPeer(failure)
      ? peerFailureText(failure, {
          peer: sending ? 'receiver' : 'sender',
          at: c.from,
          doing: sending ? 'sending to' : 'receiving from',
        })
      : failure.message);
  // cut by the sink itself (stopped at once): what it had is reported, nothing is blamed on the peer
  const cut = !error && c.interrupted !== undefined;
  if (!error && !cut) {
    if (c.decoder?.partial) error = 'the stream ended in the middle of a frame';
    else if (!c.hello && !c.plain && !echo) error = 'the connection closed before a hello';
    else if (c.verifier) error = c.verifier.finish();
  }
  const line = {
    conn: c.id,
    test: c.hello?.test,
    stream: c.hello?.stream,
    reverse: c.hello?.reverse ?? false,
    ...(c.plain ? { plain: true } : {}),
    ...(c.unverified ? { unverified: c.unverified } : {}),
    bytes: r.bytes,
    sentBytes: c.sent,
    seconds,
    bytesPerSecond: (c.hello?.reverse ? c.sent : r.bytes) / seconds,
    reads: r.reads,
    meanReadBytes: r.meanReadBytes,
    ...(c.verifier ? { frames: c.verifier.frames, mismatches: c.verifier.mismatches } : {}),
    ...(c.echoed !== undefined ? { frames: c.echoed } : {}),
    ...(error ? { error } : {}),
    ...(cut ? { interrupted: c.interrupted } : {}),
    ...st,
  };
  return { line, error };
}
