// Test requests of the serve protocol (client → server): each kind's parameters, named by the far
// end's options and bounded by the server's caps; parsing a request line; the far end's command line
// from a request, and a request from a far end's command line. Pure: no sockets.
import { createHash, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../errors.js';
import { JsonLimitError, parseBoundedJson } from '../policy/json.js';
import {
  type CountOption,
  expected,
  expectedWhole,
  MAX_DATAGRAM,
  OPTIONS,
  optionOnWire,
  wholeNumber,
  within,
} from '../policy/option-registry.js';
import { parseBitRate, parseDuration, parsePacketRate, parseSize } from '../policy/units.js';
import {
  isPlainObject,
  KINDS,
  type Kind,
  MAX_LINE_BYTES,
  PROTOCOL_VERSION,
  ProtocolError,
} from './protocol.js';

/** How a parameter's value is read and bounded. */
type ParamType =
  | 'duration' // seconds; ≤ maxDuration
  | 'interval' // seconds; 10 ms … maxDuration
  | 'bytes' // a byte count of the whole test; ≤ maxBytes
  | 'size' // bytes per message; ≤ the kind's maxMessage
  | 'buffer' // 'auto' or a size ≤ 1 GiB
  | 'rate' // 'max', datagrams/s or bit/s; finite and > 0
  | 'whole' // a whole number within the range declared for it (src/policy/option-registry.ts)
  | 'short' // seconds, 0 … 1 s (a coalescing window)
  | 'word' // a short token such as `adaptive:min=512,max=256K` (the far end parses it)
  | 'receiver' // batch | dgram
  | 'on-full' // drop | wait
  | 'gro' // on | off | auto, or true: the option alone (auto)
  | 'flag'; // true / false

/** The most streams (connections) of one TCP test: blast --parallel's cap. */
export const MAX_STREAMS = OPTIONS.parallel.max;
/** A word never starts with '-': it cannot be taken for an option of the far end. */
const WORD = /^[A-Za-z0-9][A-Za-z0-9:=,._]{0,63}$/;
const WORDS: Partial<Record<ParamType, readonly string[]>> = {
  receiver: OPTIONS.receiver.choices,
  'on-full': OPTIONS.onFull.choices,
  gro: OPTIONS.gro.choices,
};

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
  'write-hwm': 'size',
  interval: 'interval',
  verify: 'flag',
};
const TCP_TEST: Record<string, ParamType> = {
  duration: 'duration',
  bytes: 'bytes',
  size: 'size',
  sndbuf: 'buffer',
  parallel: 'whole',
  reverse: 'flag',
  inflight: 'whole',
};

/** ping's far end is `sink tcp --echo`: no --verify; its --sndbuf carries the answers. */
const PING_FAR: Record<string, ParamType> = {
  reader: 'word',
  rcvbuf: 'buffer',
  sndbuf: 'buffer',
  'write-hwm': 'size',
  interval: 'interval',
};

export const KIND_SPECS: Record<Kind, KindSpec> = {
  tcp: { far: TCP_FAR, test: TCP_TEST, maxMessage: 64 << 20 },
  drain: { far: TCP_FAR, test: TCP_TEST, maxMessage: 64 << 20 },
  // 16 MiB: the largest frame the echo end decodes (src/tcp/frame.ts)
  ping: {
    far: PING_FAR,
    test: { duration: 'duration', size: 'size', inflight: 'whole' },
    maxMessage: 16 << 20,
  },
  udp: {
    far: {
      receiver: 'receiver',
      sockets: 'whole',
      batch: 'whole',
      slot: 'size',
      coalesce: 'short',
      rcvbuf: 'buffer',
      'on-full': 'on-full',
      duration: 'duration',
      idle: 'interval',
      gro: 'gro',
    },
    test: { rate: 'rate', size: 'size', flows: 'whole', sndbuf: 'buffer', gso: 'flag' },
    maxMessage: MAX_DATAGRAM,
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
  /** The parameters the far end takes, in the order sent, as validated (base units, see checkParam). */
  farParams: Record<string, ParamValue>;
  /** The test's duration in seconds when it has one (the server's deadline is derived from it). */
  durationSeconds?: number;
}

export type Request = { type: 'hello' } | TestRequest | { type: 'done'; now: boolean };

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
  if (type === 'flag' || (type === 'gro' && typeof value === 'boolean')) {
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
      case 'receiver':
      case 'on-full':
      case 'gro': {
        const words = WORDS[type] as readonly string[];
        if (typeof value !== 'string' || !words.includes(value)) wrong(`one of ${words.join(', ')}`);
        return value as string;
      }
      case 'short': {
        // coalesce, bounded as the receiver bounds it
        const s = asNumber(parseDuration);
        if (!within('coalesce', s)) wrong(expected('coalesce'));
        return s;
      }
      case 'duration':
      case 'interval': {
        const s = asNumber(parseDuration);
        if (!(s > 0)) wrong('a positive duration');
        if (type === 'interval' && !within('interval', s)) wrong(expected('interval'));
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
      case 'whole': {
        const option = optionOnWire(name);
        if (option === undefined || OPTIONS[option].kind !== 'count') return wrong('a known parameter');
        const { min, max } = OPTIONS[option as CountOption];
        const n = wholeNumber(value);
        if (!(n >= min && n <= max)) wrong(expectedWhole(option as CountOption));
        return n;
      }
    }
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    // a UsageError from the units parser names the parameter, the value and what it takes
    if (err instanceof UsageError && err.expected !== undefined)
      refuse(`parameter ${err.option ?? name}: '${err.value}' (expected ${err.expected})`);
    refuse(`parameter ${name}: ${(err as Error).message}`);
  }
  return wrong('a known parameter type');
}

/** Constant-time token comparison (both sides hashed first, so lengths never leak either). */
export function tokenMatches(expected: string, got: unknown): boolean {
  if (typeof got !== 'string') return false;
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(expected), h(got));
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
  if (msg.type === 'done') return { type: 'done', now: msg.now === true };
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
    if (Object.hasOwn(spec.far, name)) out.farParams[name] = farValue(type, checked);
    if (name === 'duration' && typeof checked === 'number') out.durationSeconds = checked;
  }
  return out;
}

/**
 * A checked value in the far end's syntax, built from what serve validated (never the client's text):
 * durations in ms with their unit, sizes and counts as whole numbers, words from a fixed list.
 */
function farValue(type: ParamType, checked: number | string | boolean): ParamValue {
  if (typeof checked !== 'number') return checked;
  if (type === 'duration' || type === 'interval' || type === 'short')
    return `${Number((checked * 1000).toFixed(3))}ms`;
  return String(checked);
}

/**
 * The far end's options for a validated request: `--name value`; `--name` alone only for a true flag
 * (or --gro, whose value is optional), always followed by the next option, never by a value it could
 * swallow.
 */
export function farArgs(req: TestRequest): string[] {
  const args: string[] = [];
  for (const [name, value] of Object.entries(req.farParams)) {
    if (value === false) continue;
    args.push(`--${name}`);
    if (value !== true) args.push(String(value));
  }
  return args;
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
