// The control protocol of `sockbuf serve`: versioned JSON lines, each line capped. Pure: no sockets.
//
//   client → server   {"v":1,"type":"hello"}                       → hello (limits, kinds)
//                     {"v":1,"type":"test","token":"T","kind":"tcp","params":{"reader":"adaptive"}}
//                                                                   → ready (the far end's port) | error
//                     {"v":1,"type":"done"}   the client's end has finished → result
//   server → client   {"v":1,"type":"error","code":"busy","message":"busy, try again: …"}
//
// A test request names its kind and its parameters by the far end's option names; values are strings
// in the CLI's syntax (`"256K"`, `"10s"`) or plain numbers (bytes, seconds). Unknown keys, unknown
// kinds, wrong types and values beyond the server's caps are refused with a message naming them.
import { createHash, timingSafeEqual } from 'node:crypto';
import { JsonLimitError, parseBoundedJson } from '../policy/json.js';
import { parseBitRate, parseCount, parseDuration, parsePacketRate, parseSize } from '../policy/units.js';

export const PROTOCOL_VERSION = 1;
/** The longest control line either side accepts, newline excluded. */
export const MAX_LINE_BYTES = 64 * 1024;
export const DEFAULT_SERVE_PORT = 5209;

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

/** Every refusal of a control line. `code` is sent to the peer with the message. */
export class ProtocolError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
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

// ---- test kinds and their parameters ----------------------------------------------------------

export const KINDS = ['tcp', 'ping', 'drain', 'udp'] as const;
export type Kind = (typeof KINDS)[number];

/** How a parameter's value is read and bounded. */
type ParamType =
  | 'duration' // seconds; ≤ maxDuration
  | 'interval' // seconds; 10 ms … maxDuration
  | 'bytes' // a byte count of the whole test; ≤ maxBytes
  | 'size' // bytes per message; ≤ the kind's maxMessage
  | 'buffer' // 'auto' or a size ≤ 1 GiB
  | 'rate' // 'max', datagrams/s or bit/s; finite and > 0
  | 'count' // 1 … 1024
  | 'short' // seconds, 0 … 1 s (a coalescing window)
  | 'word' // a short token such as `adaptive:min=512,max=256K` or `batch`; true = the option alone
  | 'flag'; // true / false

interface KindSpec {
  /** Parameters handed to the far end as `--name value`. */
  far: Record<string, ParamType>;
  /** Parameters of the whole test the far end does not take, validated all the same. */
  test: Record<string, ParamType>;
  /** The largest message (or datagram) size. */
  maxMessage: number;
}

const TCP_FAR: Record<string, ParamType> = {
  reader: 'word',
  rcvbuf: 'buffer',
  interval: 'interval',
  verify: 'flag',
};
const TCP_TEST: Record<string, ParamType> = {
  duration: 'duration',
  bytes: 'bytes',
  size: 'size',
  sndbuf: 'buffer',
  parallel: 'count',
  reverse: 'flag',
  inflight: 'count',
};

/** ping's far end is `sink tcp --echo`: no --verify; its --sndbuf carries the answers. */
const PING_FAR: Record<string, ParamType> = {
  reader: 'word',
  rcvbuf: 'buffer',
  sndbuf: 'buffer',
  interval: 'interval',
};

export const KIND_SPECS: Record<Kind, KindSpec> = {
  tcp: { far: TCP_FAR, test: TCP_TEST, maxMessage: 64 << 20 },
  drain: { far: TCP_FAR, test: TCP_TEST, maxMessage: 64 << 20 },
  // 16 MiB: the largest frame the echo end decodes (src/tcp/frame.ts)
  ping: {
    far: PING_FAR,
    test: { duration: 'duration', size: 'size', inflight: 'count' },
    maxMessage: 16 << 20,
  },
  udp: {
    far: {
      receiver: 'word',
      sockets: 'count',
      batch: 'count',
      slot: 'size',
      coalesce: 'short',
      rcvbuf: 'buffer',
      'on-full': 'word',
      duration: 'duration',
      idle: 'interval',
      gro: 'word',
    },
    test: { rate: 'rate', size: 'size', flows: 'count', sndbuf: 'buffer', gso: 'flag' },
    maxMessage: 65507,
  },
};

export interface Limits {
  maxDurationSeconds: number;
  maxBytes: number;
}

export type ParamValue = string | number | boolean;

export interface TestRequest {
  type: 'test';
  kind: Kind;
  /** As sent, every key known and every value within the limits. */
  params: Record<string, ParamValue>;
  /** The parameters the far end takes, in the order sent. */
  farParams: Record<string, ParamValue>;
  /** The test's duration in seconds when it has one (the server's deadline is derived from it). */
  durationSeconds?: number;
}

export type Request = { type: 'hello' } | TestRequest | { type: 'done' };

const WORD = /^[A-Za-z0-9][A-Za-z0-9:=,._]{0,63}$/;

function refuse(message: string): never {
  throw new ProtocolError('refused', message);
}

/** Reads one parameter; returns its value in base units (seconds, bytes, per second) or a word. */
export function checkParam(
  name: string,
  type: ParamType,
  value: unknown,
  limits: Limits,
  maxMessage: number,
): number | string | boolean {
  const shown = typeof value === 'string' ? `'${value.slice(0, 80)}'` : String(value);
  const wrong = (expected: string): never => refuse(`parameter ${name}: ${shown} is not ${expected}`);
  if (type === 'flag' || (type === 'word' && typeof value === 'boolean')) {
    if (typeof value !== 'boolean') wrong('true or false');
    return value as boolean;
  }
  if (typeof value !== 'string' && typeof value !== 'number') wrong('a string or a number');
  if (typeof value === 'string' && value.length > 64) wrong('at most 64 characters');
  if (typeof value === 'number' && !Number.isFinite(value)) wrong('a finite number');
  const str = String(value);
  const asNumber = (parse: (s: string, o: string) => number): number =>
    typeof value === 'number' ? value : parse(str, name);
  try {
    switch (type) {
      case 'word':
        if (typeof value !== 'string' || !WORD.test(value)) wrong('a word such as adaptive:max=256K');
        return value as string;
      case 'short': {
        const s = asNumber(parseDuration);
        if (!(s >= 0 && s <= 1)) wrong('a duration from 0 to 1s');
        return s;
      }
      case 'duration':
      case 'interval': {
        const s = asNumber(parseDuration);
        if (!(s > 0)) wrong('a positive duration');
        if (type === 'interval' && s < 0.01) wrong('an interval of at least 10ms');
        if (s > limits.maxDurationSeconds)
          refuse(
            `parameter ${name}: ${shown} is longer than this server allows (${limits.maxDurationSeconds} s)`,
          );
        return s;
      }
      case 'bytes':
      case 'size':
      case 'buffer': {
        if (type === 'buffer' && value === 'auto') return 'auto';
        const n = asNumber(parseSize);
        if (!Number.isSafeInteger(n) || n < 0) wrong('a size in bytes');
        const cap = type === 'bytes' ? limits.maxBytes : type === 'size' ? maxMessage : 1 << 30;
        if (n > cap) refuse(`parameter ${name}: ${shown} is more than this server allows (${cap} bytes)`);
        if (type === 'size' && n < 1) wrong('at least 1 byte');
        return n;
      }
      case 'rate': {
        if (value === 'max') return 'max';
        let n: number;
        if (typeof value === 'number') n = value;
        else {
          try {
            n = parsePacketRate(str, name);
          } catch {
            n = parseBitRate(str, name);
          }
        }
        if (!(n > 0) || n > 1e12) wrong("a positive rate such as 100k, 1gbit or 'max'");
        return n;
      }
      case 'count': {
        const n = typeof value === 'number' ? value : parseCount(str, name, 1, 1024);
        if (!Number.isInteger(n) || n < 1 || n > 1024) wrong('a whole number from 1 to 1024');
        return n;
      }
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    // a UsageError from the units parser: it already names the parameter and the value
    refuse(`parameter ${(err as Error).message.replace(/^invalid value for /, '')}`);
  }
  return wrong('a known parameter type');
}

/** Constant-time token comparison (both sides hashed first, so lengths never leak either). */
export function tokenMatches(expected: string, got: unknown): boolean {
  if (typeof got !== 'string') return false;
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(expected), h(got));
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Parses and validates one control line from a client. Throws ProtocolError with a message. */
export function parseRequest(line: string, limits: Limits, token?: string): Request {
  if (Buffer.byteLength(line) > MAX_LINE_BYTES)
    throw new ProtocolError('too-long', `control line longer than ${MAX_LINE_BYTES} bytes`);
  let msg: unknown;
  try {
    msg = parseBoundedJson(line);
  } catch (err) {
    if (err instanceof JsonLimitError) throw new ProtocolError('bad-request', `control line: ${err.message}`);
    throw new ProtocolError('bad-json', 'control line is not JSON');
  }
  if (!isPlainObject(msg)) throw new ProtocolError('bad-request', 'control line is not a JSON object');
  if (msg.v !== PROTOCOL_VERSION)
    throw new ProtocolError(
      'version',
      `unknown protocol version ${JSON.stringify(msg.v)?.slice(0, 20)} (this server speaks ${PROTOCOL_VERSION})`,
    );
  if (msg.type === 'hello') return { type: 'hello' };
  if (msg.type === 'done') return { type: 'done' };
  if (msg.type !== 'test')
    throw new ProtocolError('bad-request', `unknown message type ${JSON.stringify(msg.type)?.slice(0, 40)}`);
  if (token !== undefined && !tokenMatches(token, msg.token))
    throw new ProtocolError('unauthorized', 'a valid token is required (serve --token)');
  const kind = msg.kind;
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind))
    throw new ProtocolError(
      'refused',
      `unknown test kind ${JSON.stringify(kind)?.slice(0, 40)} (expected ${KINDS.join(', ')})`,
    );
  const spec = KIND_SPECS[kind as Kind];
  const params = msg.params ?? {};
  if (!isPlainObject(params)) throw new ProtocolError('bad-request', 'params must be a JSON object');
  const out: TestRequest = { type: 'test', kind: kind as Kind, params: {}, farParams: {} };
  for (const [name, value] of Object.entries(params)) {
    const type = Object.hasOwn(spec.far, name)
      ? spec.far[name]
      : Object.hasOwn(spec.test, name)
        ? spec.test[name]
        : undefined;
    if (type === undefined)
      refuse(
        `unknown parameter ${JSON.stringify(name).slice(0, 40)} for a ${kind} test (known: ${[...Object.keys(spec.far), ...Object.keys(spec.test)].join(', ')})`,
      );
    const checked = checkParam(name, type, value, limits, spec.maxMessage);
    out.params[name] = value as ParamValue;
    if (Object.hasOwn(spec.far, name)) out.farParams[name] = value as ParamValue;
    if (name === 'duration' && typeof checked === 'number') out.durationSeconds = checked;
  }
  return out;
}

/** The far end's options for a validated request: `--name value` (`--name` alone for true flags). */
export function farArgs(req: TestRequest): string[] {
  const args: string[] = [];
  for (const [name, value] of Object.entries(req.farParams)) {
    if (value === false) continue;
    args.push(`--${name}`);
    if (value !== true) args.push(String(value));
  }
  return args;
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

// ---- from an end's command line to a request ---------------------------------------------------

/** Options the server sets on the far end itself; dropped from a command line turned into a request. */
const SERVER_SET = new Set(['listen', 'json', 'once', 'echo']);

/**
 * Turns a far end's sockbuf command line (`sink tcp --listen H:0 --reader adaptive --json`) into the
 * kind and parameters of a test request (`sink tcp --echo …` is a ping test's far end). Throws ProtocolError('refused') for a command serve cannot
 * run. `--name=value` and `--name value` both work; flags are the parameters of type 'flag'.
 */
export function requestFromArgs(args: readonly string[]): { kind: Kind; params: Record<string, ParamValue> } {
  const words: string[] = [];
  let i = 0;
  while (i < args.length && !args[i].startsWith('-')) words.push(args[i++]);
  const echo = args.slice(i).some((a) => a === '--echo' || a.startsWith('--echo='));
  const kind: Kind | undefined =
    words.join(' ') === 'sink tcp'
      ? echo
        ? 'ping'
        : 'tcp'
      : words.join(' ') === 'sink udp'
        ? 'udp'
        : undefined;
  if (!kind) refuse(`sockbuf serve runs sink tcp [--echo] and sink udp far ends, not '${words.join(' ')}'`);
  const spec = KIND_SPECS[kind];
  const params: Record<string, ParamValue> = {};
  for (; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) refuse(`unexpected argument '${a}' in the far end's command`);
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    const type = spec.far[name] ?? spec.test[name];
    let value: ParamValue;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (type === 'flag' || i + 1 >= args.length || args[i + 1].startsWith('--')) value = true;
    else value = args[++i];
    if (SERVER_SET.has(name)) continue;
    if (type === undefined) refuse(`option --${name} of the far end is not one serve passes on`);
    params[name] = value;
  }
  return { kind, params };
}
