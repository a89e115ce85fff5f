// Fuzz targets: every reader of JSON from outside (src/policy/json.ts and its callers). The inputs are
// valid documents with hostile values put in anywhere: nesting far deeper than any stack takes
// (200 000 levels: the server's main thread has a larger stack than the fuzzer's worker, so a target
// that passes only because a RangeError was caught here would fail there; none of these targets
// allows a RangeError), strings up to 1 MiB, numbers past every range, and each wrong type.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MAX_EVENT_LINE, parseEventLine } from '../../../src/bench/ends.js';
import { parseResults } from '../../../src/bench/report/results.js';
import { FAR_END_ENV, parseFarEnd } from '../../../src/ends/far-end-limits.js';
import { parseHello } from '../../../src/ends/hello.js';
import { UsageError } from '../../../src/errors.js';
import { LAB_ENV, labFromEnv } from '../../../src/lab/registry.js';
import {
  DEFAULT_MAX_JSON_DEPTH,
  JsonLimitError,
  jsonDepth,
  parseBoundedJson,
} from '../../../src/policy/json.js';
import { KINDS, ProtocolError, parseReply } from '../../../src/serve/protocol.js';
import { parseRequest } from '../../../src/serve/request.js';
import type { Target } from '../harness.js';
import type { Rng } from '../prng.js';

const NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0.5',
  '123456789012345678901234567890',
  '9007199254740993',
  '4294967296',
  '18446744073709551616',
  '-1',
  '0',
];
const WRONG = ['null', 'true', 'false', '[]', '{}', '""', '"1"', '"-1"', '"--reader"', '[1]', '{"x":1}'];
const STRINGS = ['"\\u0000"', '"\\ud800"', '"\\"\\\\"', '"\\u202e"', '"__proto__"'];

/** A nesting of `depth` arrays or objects; balanced unless `cut`. */
function nested(rng: Rng, depth: number, cut: boolean): string {
  const obj = rng.chance(0.5);
  const open = obj ? '{"a":' : '[';
  const close = obj ? '}' : ']';
  const inner = obj ? '1' : '';
  return open.repeat(depth) + inner + close.repeat(cut ? rng.int(depth) : depth);
}

/** One hostile JSON value, as text. */
export function hostileValue(rng: Rng): string {
  switch (rng.int(5)) {
    case 0:
      return nested(
        rng,
        rng.pick([DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_DEPTH + 1, 100, 5_000, 50_000, 200_000]),
        rng.chance(0.1),
      );
    case 1:
      return `"${'x'.repeat(rng.pick([100, 4096, 70_000, 1 << 20]))}"`;
    case 2:
      return rng.pick(NUMBERS);
    case 3:
      return rng.pick(STRINGS);
    default:
      return rng.pick(WRONG);
  }
}

/**
 * `value` as JSON text with hostile values in place of some of its parts (each part with chance p),
 * sometimes an extra field, sometimes the whole of it.
 */
export function hostileText(rng: Rng, value: unknown, p = 0.2, top = true): string {
  if (!top && rng.chance(p)) return hostileValue(rng);
  if (Array.isArray(value)) return `[${value.map((v) => hostileText(rng, v, p, false)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(
      ([k, v]) => `${JSON.stringify(k)}:${hostileText(rng, v, p, false)}`,
    );
    if (rng.chance(p))
      parts.splice(
        rng.int(parts.length + 1),
        0,
        `${rng.pick(['"x"', '"__proto__"', '"constructor"'])}:${hostileValue(rng)}`,
      );
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Anything it returns must be safe to write out again (the server and the runner echo it). */
const writable = (out: unknown) => {
  if (out === undefined) return;
  assert.ok(typeof JSON.stringify(out) === 'string');
  assert.ok(jsonDepth(JSON.stringify(out)) <= DEFAULT_MAX_JSON_DEPTH + 8);
};

const REQUEST = {
  v: 1,
  type: 'test',
  kind: 'tcp',
  params: { reader: 'adaptive', rcvbuf: '256K', duration: '2s' },
  token: 't',
};
const REPLIES = [
  {
    v: 1,
    type: 'hello',
    protocol: 1,
    version: '0.1.0',
    kinds: ['tcp'],
    maxDurationSeconds: 60,
    maxBytes: 1e9,
    tokenRequired: false,
  },
  { v: 1, type: 'ready', kind: 'tcp', port: 5201 },
  {
    v: 1,
    type: 'result',
    kind: 'tcp',
    exitCode: 0,
    signal: null,
    lines: [{ event: 'result', bytes: 1 }],
    stderr: '',
  },
  { v: 1, type: 'error', code: 'busy', message: 'x' },
];
const HELLO = {
  sockbuf: 1,
  test: 't',
  stream: 0,
  streams: 1,
  reverse: false,
  size: 131072,
  bytes: 1000,
  seconds: 1,
  sndbuf: 65536,
};
const EVENT = {
  event: 'connection',
  conn: 1,
  bytes: 100,
  reader: { sizeBytes: 4096, histogram: [1, 2, 3] },
  tcpInfo: { rtt: 10 },
};
/** A real results document (the quick suite's fixture), cut to two rows. */
const RESULTS = (() => {
  const d = JSON.parse(readFileSync(new URL('../../fixtures/results-quick.json', import.meta.url), 'utf8'));
  return {
    ...d,
    results: d.results.slice(0, 2),
    skipped: (d.skipped ?? []).slice(0, 1),
    verdicts: (d.verdicts ?? []).slice(0, 2),
  };
})();
const LAB = {
  id: '1',
  pid: 1,
  rttMs: 2,
  bitsPerSecond: 1e9,
  loss: 0,
  mtu: 1500,
  mode: 'tun',
  hosts: { client: { netns: 'sbl-1-c', ipv4: '10.0.0.1' }, server: { netns: 'sbl-1-s', ipv4: '10.0.0.2' } },
};

const limits = { maxDurationSeconds: 60, maxBytes: 1 << 30 };

export const jsonTargets: Target[] = [
  {
    name: 'json.parseBoundedJson',
    generate: (rng: Rng) => hostileText(rng, rng.pick([REQUEST, HELLO, EVENT, RESULTS]), 0.3),
    run: (text: string) => parseBoundedJson(text, { maxLength: 4 << 20 }),
    allowed: (e) => e instanceof JsonLimitError || e instanceof SyntaxError,
    check: (_t, out) => writable(out),
    maxAllocBytes: () => 16 << 20,
    testCount: 100,
  } as Target<string> as Target,
  {
    name: 'json.parseRequest',
    generate: (rng: Rng) => hostileText(rng, { ...REQUEST, kind: rng.pick(KINDS) }),
    run: (line: string) => parseRequest(line, limits, line.length % 2 ? 't' : undefined),
    allowed: (e) => e instanceof ProtocolError,
    check: (_l, out) => writable(out),
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<string> as Target,
  {
    name: 'json.parseReply',
    generate: (rng: Rng) => hostileText(rng, rng.pick(REPLIES)),
    run: (line: string) => parseReply(line),
    allowed: (e) => e instanceof ProtocolError,
    check: (_l, out) => writable(out),
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<string> as Target,
  {
    name: 'json.parseHello',
    generate: (rng: Rng) => Buffer.from(hostileText(rng, HELLO)),
    run: (b: Buffer) => parseHello(b),
    allowed: (e) => e instanceof Error && /not a sockbuf hello/.test(e.message),
    check: (_b, out) => {
      const h = out as { size: number; streams: number };
      assert.ok(Number.isSafeInteger(h.size) && h.size >= 0 && h.size <= 0xffffffff);
      assert.ok(Number.isSafeInteger(h.streams) && h.streams >= 0);
    },
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<Buffer> as Target,
  {
    // the bench runner's end lines and serve's far-end lines (both go through parseEventLine)
    name: 'json.parseEventLine',
    generate: (rng: Rng) => hostileText(rng, EVENT),
    run: (line: string) => parseEventLine(line),
    allowed: () => false,
    check: (line, out) => {
      writable(out);
      if (line.length > MAX_EVENT_LINE) assert.equal(out, undefined);
    },
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<string> as Target,
  {
    name: 'json.parseResults',
    generate: (rng: Rng) => hostileText(rng, RESULTS, rng.pick([0, 0.002, 0.01, 0.05])),
    run: (text: string) => parseResults(text, 'fuzz.json'),
    allowed: (e) => e instanceof UsageError,
    check: (_t, out) => writable(out),
    maxAllocBytes: () => 16 << 20,
    testCount: 100,
  } as Target<string> as Target,
  {
    // what serve hands its far end (the secret and the caps), read by sink tcp and sink udp
    name: 'json.parseFarEnd',
    generate: (rng: Rng) =>
      hostileText(rng, {
        secret: '0123456789abcdef0123456789abcdef',
        maxBytes: 1 << 30,
        maxSeconds: 62,
        maxFrame: 64 << 20,
        maxStreams: 128,
        peer: '127.0.0.1',
      }),
    run: (text: string) => parseFarEnd(text),
    allowed: (e) => e instanceof Error && e.message.startsWith(FAR_END_ENV),
    check: (_t, out) => {
      const f = out as ReturnType<typeof parseFarEnd>;
      for (const k of ['maxBytes', 'maxSeconds', 'maxFrame', 'maxStreams'] as const)
        assert.ok(Number.isFinite(f[k]) && f[k] > 0, k);
      assert.ok(typeof f.secret === 'string' && f.secret.length >= 16);
      assert.ok(f.peer === undefined || (typeof f.peer === 'string' && f.peer.length <= 64));
    },
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<string> as Target,
  {
    name: 'json.labFromEnv',
    generate: (rng: Rng) => hostileText(rng, LAB, 0.15),
    run: (text: string) => labFromEnv({ [LAB_ENV]: text }),
    allowed: (e) => e instanceof UsageError,
    check: (_t, out) => writable(out),
    maxAllocBytes: () => 16 << 20,
    testCount: 300,
  } as Target<string> as Target,
];
