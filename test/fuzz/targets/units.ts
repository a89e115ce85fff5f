// Fuzz targets: the option-value parsers (src/policy/units.ts, src/policy/address.ts).
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { formatHostPort, parseListen, parseTo } from '../../../src/policy/address.js';

/** An address, or a name of letters, digits, '-', '_' and dots (resolved later, never here). */
const isHost = (h: string) =>
  isIP(h) !== 0 || (/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(h) && /[A-Za-z_-]/.test(h));

import { UsageError } from '../../../src/errors.js';
import { parseWhole } from '../../../src/policy/option-registry.js';
import {
  parseBitRate,
  parseDuration,
  parseList,
  parsePacketRate,
  parsePercent,
  parseSize,
} from '../../../src/policy/units.js';
import type { Target } from '../harness.js';
import { mutateString, type Rng } from '../prng.js';

const CORPUS = [
  '8192',
  '256K',
  '256KiB',
  '2M',
  '2MiB',
  '2KB',
  '2MB',
  '1.5G',
  '0',
  '.5M',
  '10gbit',
  '500mbit',
  '1.2GB/s',
  '100k',
  '100kpps',
  '2.5M',
  '1000',
  '250us',
  '2ms',
  '1.5s',
  '1m',
  '1h',
  '0.1%',
  '100%',
  '5%',
  '250,4000,16000',
  '127.0.0.1:5201',
  '[::1]:5201',
  '5201',
  'localhost:80',
  '::1',
  '0.0.0.0:0',
  '[fe80::1%eth0]:1',
  '10.0.0.1:65535',
  '65536',
  '1.2.3.4:99999',
  ' 64 K ',
  '9'.repeat(30),
];
const UNITS = [
  '',
  'k',
  'K',
  'KiB',
  'M',
  'MiB',
  'G',
  'GiB',
  'T',
  'KB',
  'MB',
  'GB',
  'b',
  'bit',
  'kbit',
  'gbit',
  'B/s',
  'GB/s',
  'GiB/s',
  'pps',
  'kpps',
  '/s',
  'ns',
  'us',
  'µs',
  'ms',
  's',
  'm',
  'h',
  '%',
  'x',
];

/** Valid-looking, mutated, grammar-built and random strings. */
export function optionString(rng: Rng): string {
  switch (rng.int(5)) {
    case 0:
      return rng.pick(CORPUS);
    case 1:
      return mutateString(rng, rng.pick(CORPUS));
    case 2: {
      const num = rng.pick([
        String(rng.int(100000)),
        `${rng.int(1000)}.${rng.int(1000)}`,
        `.${rng.int(99)}`,
        '9'.repeat(rng.range(10, 400)),
        `${rng.int(10)}e${rng.int(400)}`,
        `-${rng.int(100)}`,
      ]);
      const ws = rng.pick(['', ' ', '  ', '\t']);
      return rng.pick(['', ' ']) + num + ws + rng.pick(UNITS) + rng.pick(['', ' ', ',', ':1']);
    }
    case 3:
      return rng.stringFrom('0123456789.,:[]%/ kKmMgGiIbBsSuµnhpt-+eE', rng.length(40));
    default:
      return rng.stringFrom('\0\n\u00ff\u2028\ud800\u{10ffff}aZ9.:', rng.length(20));
  }
}

const usage = (e: unknown) => e instanceof UsageError;

function stringTarget(
  name: string,
  parse: (s: string) => unknown,
  check?: (s: string, out: unknown) => void,
): Target<string> {
  return { name, generate: optionString, run: parse, allowed: usage, check };
}

const num = (out: unknown) => {
  assert.equal(typeof out, 'number');
  return out as number;
};

export const unitsTargets: Target[] = [
  stringTarget(
    'units.parseSize',
    (s) => parseSize(s, '--size'),
    (s, out) => {
      const n = num(out);
      assert.ok(Number.isSafeInteger(n) && n >= 0, `size ${n} not a safe whole number`);
      if (/^\d+$/.test(s.trim())) assert.equal(n, Number(s.trim()));
    },
  ),
  {
    name: 'units.parseSize(number)',
    generate: (rng) =>
      rng.pick([
        rng.u32(),
        -rng.u32(),
        rng.u32() / 7,
        2 ** rng.int(80),
        Number.NaN,
        Number.POSITIVE_INFINITY,
        -0,
      ]),
    run: (n: number) => parseSize(n, '--size'),
    allowed: usage,
    check: (n, out) => assert.equal(out, n),
  } as Target<number> as Target,
  stringTarget(
    'units.parseBitRate',
    (s) => parseBitRate(s, '--bandwidth'),
    (_s, out) => {
      const n = num(out);
      assert.ok(Number.isFinite(n) && n > 0);
    },
  ),
  stringTarget(
    'units.parsePacketRate',
    (s) => parsePacketRate(s, '--rate'),
    (_s, out) => {
      const n = num(out);
      assert.ok(Number.isFinite(n) && n > 0);
    },
  ),
  stringTarget(
    'units.parseDuration',
    (s) => parseDuration(s, '--duration'),
    (_s, out) => {
      const n = num(out);
      assert.ok(Number.isFinite(n) && n >= 0);
    },
  ),
  stringTarget(
    'units.parsePercent',
    (s) => parsePercent(s, '--loss'),
    (_s, out) => {
      const n = num(out);
      assert.ok(n >= 0 && n <= 1);
    },
  ),
  stringTarget(
    'options.parseWhole',
    (s) => parseWhole(s, '--repeat', 1, 1000),
    (_s, out) => {
      const n = num(out);
      assert.ok(Number.isInteger(n) && n >= 1 && n <= 1000);
    },
  ),
  stringTarget(
    'units.parseList',
    (s) => parseList(s, '--sizes', parseSize),
    (_s, out) => {
      assert.ok(Array.isArray(out) && out.length > 0);
    },
  ),
  stringTarget(
    'address.parseListen',
    (s) => parseListen(s),
    (_s, out) => {
      const hp = out as { host: string; port: number };
      assert.ok(isHost(hp.host), `host ${hp.host}`);
      assert.ok(Number.isInteger(hp.port) && hp.port >= 0 && hp.port <= 65535);
    },
  ),
  stringTarget(
    'address.parseTo',
    (s) => parseTo(s),
    (_s, out) => {
      const hp = out as { host: string; port: number };
      assert.ok(isHost(hp.host) && hp.port >= 1 && hp.port <= 65535);
      assert.deepEqual(parseTo(formatHostPort(hp)), hp, 'formatHostPort round-trips');
    },
  ),
];
