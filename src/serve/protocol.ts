// The control protocol of `sockbuf serve`: versioned JSON lines, each line capped. Pure: no sockets.
//
//   client → server   {"v":1,"type":"hello"}                       → hello (limits, kinds)
//                     {"v":1,"type":"test","token":"T","kind":"tcp","params":{"reader":"adaptive"}}
//                                                                   → ready (the far end's port) | error
//                     {"v":1,"type":"done"}   the client's end has finished → result
//                     {"v":1,"type":"done","now":true}   the client was stopped (a signal): the far end
//                                             is stopped at once, not after the grace → result
//   server → client   {"v":1,"type":"error","code":"busy","message":"busy, try again: …"}
//
// A test request names its kind and its parameters by the far end's option names; values are strings
// in the CLI's syntax (`"256K"`, `"10s"`) or plain numbers (bytes, seconds). Unknown keys, unknown
// kinds, wrong types and values beyond the server's caps are refused with a message naming them.
import { PeerError } from '../errors.js';
import { JsonLimitError, parseBoundedJson } from '../policy/json.js';

export const PROTOCOL_VERSION = 1;
/** The longest control line either side accepts, newline excluded. */
export const MAX_LINE_BYTES = 64 * 1024;
export const DEFAULT_SERVE_PORT = 5209;
/**
 * A far end that serve stops gets SIGTERM, then SIGKILL this long after: the client that stopped it
 * (remote on SIGINT/SIGTERM, `done` with `now`) waits this long and a little more for its results.
 */
export const FAR_END_STOP_SECONDS = 2;

export type ErrorCode =
  | 'bad-json'
  | 'too-long'
  | 'version'
  | 'bad-request'
  | 'unauthorized'
  | 'refused'
  | 'busy'
  | 'idle'
  | 'failed';

/**
 * Every refusal of a control line (`code` ERR_SOCKBUF_PROTOCOL): `reason` is the protocol's word for
 * it, sent to the peer with the message.
 */
export class ProtocolError extends PeerError {
  readonly reason: ErrorCode;
  constructor(reason: ErrorCode, message: string) {
    super(message);
    this.name = 'ProtocolError';
    this.reason = reason;
  }
}

// ---- line framing -----------------------------------------------------------------------------

/**
 * Splits a byte stream into lines of at most `maxBytes`. A line that grows past the cap throws
 * ProtocolError('too-long') as soon as the cap is passed: at most `maxBytes` are ever buffered.
 */
export class LineDecoder {
  private parts: Buffer[] = [];
  private held = 0;
  constructor(readonly maxBytes = MAX_LINE_BYTES) {}

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (this.held + end - start > this.maxBytes) {
        this.parts = [];
        this.held = 0;
        throw new ProtocolError('too-long', `control line longer than ${this.maxBytes} bytes`);
      }
      if (nl < 0) {
        if (end > start) {
          this.parts.push(Buffer.from(chunk.subarray(start)));
          this.held += end - start;
        }
        return lines;
      }
      const piece = chunk.subarray(start, nl);
      const line = this.parts.length ? Buffer.concat([...this.parts, piece]) : piece;
      this.parts = [];
      this.held = 0;
      const text = line.toString('utf8').replace(/\r$/, '');
      if (text.trim()) lines.push(text);
      start = nl + 1;
    }
  }

  /** Bytes of an unfinished line. */
  get pending(): number {
    return this.held;
  }
}

export function encodeMessage(msg: object): string {
  const line = JSON.stringify({ v: PROTOCOL_VERSION, ...msg });
  if (Buffer.byteLength(line) > MAX_LINE_BYTES)
    throw new ProtocolError('too-long', 'message too long to send');
  return `${line}\n`;
}

/** The kinds of test a server runs. */
export const KINDS = ['tcp', 'ping', 'drain', 'udp'] as const;
export type Kind = (typeof KINDS)[number];

/** A JSON object (not null, not an array). */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

// ---- server → client --------------------------------------------------------------------------

export interface HelloReply {
  type: 'hello';
  protocol: number;
  version: string;
  kinds: Kind[];
  maxDurationSeconds: number;
  maxBytes: number;
  tokenRequired: boolean;
}
export interface ReadyReply {
  type: 'ready';
  kind: Kind;
  /** Where the far end listens, as the server sees it (the client connects to the server's host). */
  port: number;
  /** The test's secret: every data connection's hello must carry it (SOCKBUF_SECRET for blast). */
  secret?: string;
}
export interface ResultReply {
  type: 'result';
  kind: Kind;
  exitCode: number | null;
  signal: string | null;
  /** Why the server stopped the far end early, if it did (deadline, max-bytes, client gone). */
  stopped?: string;
  /** Every JSON line the far end printed (its results and socketStats). */
  lines: unknown[];
  stderr: string;
}
export interface ErrorReply {
  type: 'error';
  code: ErrorCode;
  message: string;
}
export type Reply = HelloReply | ReadyReply | ResultReply | ErrorReply;

/** Parses one line from a server. Throws ProtocolError when it is not a reply this client knows. */
export function parseReply(line: string): Reply {
  let msg: unknown;
  try {
    msg = parseBoundedJson(line);
  } catch (err) {
    if (err instanceof JsonLimitError) throw new ProtocolError('bad-request', `server line: ${err.message}`);
    throw new ProtocolError('bad-json', 'server sent a line that is not JSON');
  }
  if (!isPlainObject(msg))
    throw new ProtocolError('bad-request', 'server sent a line that is not a JSON object');
  if (msg.v !== PROTOCOL_VERSION)
    throw new ProtocolError(
      'version',
      `server speaks protocol ${JSON.stringify(msg.v)?.slice(0, 20)}, not ${PROTOCOL_VERSION}`,
    );
  switch (msg.type) {
    case 'hello':
      if (typeof msg.maxDurationSeconds === 'number' && typeof msg.maxBytes === 'number')
        return msg as unknown as HelloReply;
      break;
    case 'ready':
      if (Number.isInteger(msg.port) && (msg.port as number) > 0 && (msg.port as number) < 65536)
        return msg as unknown as ReadyReply;
      break;
    case 'result':
      if (Array.isArray(msg.lines) && typeof msg.stderr === 'string') return msg as unknown as ResultReply;
      break;
    case 'error':
      if (typeof msg.code === 'string' && typeof msg.message === 'string')
        return msg as unknown as ErrorReply;
      break;
  }
  throw new ProtocolError(
    'bad-request',
    `server sent an unexpected message ${JSON.stringify(msg.type)?.slice(0, 40)}`,
  );
}
