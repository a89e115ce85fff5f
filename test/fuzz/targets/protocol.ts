// Fuzz targets: the serve control protocol (src/serve/protocol.ts, request.ts).
import assert from 'node:assert/strict';
import { parseDuration, parseSize } from '../../../src/policy/units.js';
import {
  KINDS,
  LineDecoder,
  MAX_LINE_BYTES,
  ProtocolError,
  parseReply,
} from '../../../src/serve/protocol.js';
import { farArgs, KIND_SPECS, parseRequest } from '../../../src/serve/request.js';
import type { Target } from '../harness.js';
import { mutateString, type Rng } from '../prng.js';
import { optionString } from './units.js';

const limits = { maxDurationSeconds: 60, maxBytes: 1 << 30 };
const VALUES = () => [
  true,
  false,
  null,
  0,
  -1,
  1e9,
  1e308,
  -0,
  0.5,
  'auto',
  'max',
  '10s',
  '1e9s',
  '256K',
  '10GiB',
  [],
  {},
];

function value(rng: Rng): unknown {
  return rng.chance(0.5) ? rng.pick(VALUES()) : optionString(rng);
}

/** A request: usually well-formed JSON with hostile fields, sometimes mutated text. */
function requestLine(rng: Rng): string {
  const kind = rng.chance(0.9) ? rng.pick(KINDS) : optionString(rng);
  const spec = KIND_SPECS[kind as (typeof KINDS)[number]];
  const names = spec ? [...Object.keys(spec.far), ...Object.keys(spec.test)] : ['x'];
  const params: Record<string, unknown> = {};
  for (let i = rng.int(6); i > 0; i--)
    params[rng.chance(0.9) ? rng.pick(names) : optionString(rng)] = value(rng);
  const msg: Record<string, unknown> = {
    v: rng.chance(0.9) ? 1 : rng.pick([0, 2, '1', null, 1.0000001]),
    type: rng.chance(0.8) ? 'test' : rng.pick(['hello', 'done', 'ready', '', 7]),
    kind,
    params: rng.chance(0.95) ? params : rng.pick([[], 'x', null, 3]),
  };
  if (rng.chance(0.3)) msg.token = rng.pick(['t', '', 7, null, 'x'.repeat(1000)]);
  let line = JSON.stringify(msg);
  if (rng.chance(0.2))
    line = mutateString(rng, line, ['{', '}', '"', ':', ',', '[', '\\', '\\u0000', '1e999']);
  if (rng.chance(0.01)) line = line.padEnd(MAX_LINE_BYTES + rng.range(-2, 2), ' ');
  return line;
}

const protocolError = (e: unknown) => e instanceof ProtocolError;

export const protocolTargets: Target[] = [
  {
    name: 'protocol.parseRequest',
    generate: requestLine,
    run: (line: string) => parseRequest(line, limits, rng0Token(line)),
    allowed: protocolError,
    check: (_line, out) => {
      const r = out as ReturnType<typeof parseRequest>;
      if (r.type !== 'test') return;
      assert.ok(KINDS.includes(r.kind));
      if (r.durationSeconds !== undefined) assert.ok(r.durationSeconds > 0 && r.durationSeconds <= 60);
      for (const v of Object.values(r.farParams)) {
        assert.ok(['string', 'number', 'boolean'].includes(typeof v));
        assert.ok(!String(v).startsWith('-'), 'a far-end value never looks like an option');
      }
      // the far end's command line is built from validated values in the far end's own syntax: every
      // option but a flag (or --gro) has a value, durations carry a unit, sizes and counts are whole
      const args = farArgs(r);
      const spec = KIND_SPECS[r.kind].far;
      for (let i = 0; i < args.length; i++) {
        const name = args[i].slice(2);
        assert.ok(args[i].startsWith('--') && Object.hasOwn(spec, name), args[i]);
        const next = args[i + 1];
        if (next === undefined || next.startsWith('--')) {
          assert.ok(spec[name] === 'flag' || spec[name] === 'gro', `--${name} without its value`);
          continue;
        }
        i++;
        if (['duration', 'interval', 'short'].includes(spec[name])) assert.ok(parseDuration(next) >= 0);
        if (['size', 'buffer'].includes(spec[name]) && next !== 'auto') assert.ok(parseSize(next) >= 0);
        if (['count', 'sockets', 'streams'].includes(spec[name])) assert.match(next, /^\d+$/);
      }
    },
  } as Target<string> as Target,
  {
    name: 'protocol.parseReply',
    generate: (rng: Rng) =>
      mutateString(
        rng,
        rng.pick([
          '{"v":1,"type":"ready","port":5201}',
          '{"v":1,"type":"result","lines":[],"stderr":""}',
          '{"v":1,"type":"error","code":"busy","message":"x"}',
        ]),
      ),
    run: (line: string) => parseReply(line),
    allowed: protocolError,
  } as Target<string> as Target,
  {
    name: 'protocol.LineDecoder',
    generate: (rng: Rng) => {
      const chunks: Buffer[] = [];
      for (let i = rng.range(1, 8); i > 0; i--) {
        const n = rng.pick([rng.length(64), rng.length(300), 1024]);
        const b = rng.bytes(n);
        const p = rng.pick([0.001, 0.01, 0.05]);
        for (let j = 0; j < n; j++) if (rng.chance(p)) b[j] = 0x0a;
        chunks.push(b);
      }
      return chunks;
    },
    run: (chunks: Buffer[]) => {
      const d = new LineDecoder(256);
      const lines: string[] = [];
      for (const c of chunks) lines.push(...d.push(c));
      assert.ok(d.pending <= 256);
      return lines;
    },
    allowed: protocolError,
    check: (_c, out) => {
      for (const l of out as string[]) assert.ok(Buffer.byteLength(l) <= 256 * 3, 'a line within the cap');
    },
  } as Target<Buffer[]> as Target,
];

/** Half the requests are checked against a server with a token. */
function rng0Token(line: string): string | undefined {
  return line.length % 2 ? 't' : undefined;
}
