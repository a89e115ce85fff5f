// Every option's range and default appears once in the source: in its declaration (src/policy/option-registry.ts).
// The known ways they were restated before (issue 38 item 3) are searched for in src/: a default after
// `??`, a range beside the option's name or flag, a commander definition or a scenario's flags string
// that spells a declared option again, a whole-number regex or a parseCount() of its own; for sizes,
// durations and rates also a default beside the flag ('--rtt <duration>', …, '2ms'), a bound of its own
// (86400 beside maxDurationSeconds, MAX_RTT_SECONDS = 60, s <= 3600) and the largest datagram again.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OPTIONS, type OptionDecl } from '../../src/policy/option-registry.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const REGISTRY = 'policy/option-registry.ts';

function sources(dir = SRC): { path: string; lines: string[] }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    if (!e.name.endsWith('.ts')) return [];
    return [{ path: relative(SRC, p), lines: readFileSync(p, 'utf8').split('\n') }];
  });
}

/** Code only: comments and doc lines say what a default is, in words, and may. */
const isComment = (line: string) => /^\s*(\/\/|\*|\/\*\*)/.test(line);

/** `file:line: text` of every code line outside the registry that `re` matches. */
function restated(re: RegExp, where = (_path: string) => true): string[] {
  return sources()
    .filter((f) => f.path !== REGISTRY && where(f.path))
    .flatMap((f) =>
      f.lines.flatMap((line, i) =>
        !isComment(line) && re.test(line) ? [`${f.path}:${i + 1}: ${line.trim()}`] : [],
      ),
    );
}

const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const decls = Object.entries(OPTIONS) as [string, OptionDecl][];

test('no declared default is restated after ?? (batch ?? 64, flows ?? 1, maxConcurrent ?? 2 …)', () => {
  const found = decls.flatMap(([name, d]) =>
    d.default === undefined
      ? []
      : restated(new RegExp(`\\b${name}\\s*\\?\\?\\s*(['"]${quote(String(d.default))}['"]|\\d)`)),
  );
  // the known receive and send batch defaults, by value, whatever the variable is called
  found.push(...restated(/\bbatch\b[^\n]*\?\?\s*(64|32)\b/));
  // a UDP receiver's 8 MiB, once in three files
  found.push(...restated(/rcvbuf[^\n]*(\b8 \* 1024 \* 1024\b|'8MiB'|'8M')/i));
  assert.deepEqual(found, []);
});

test("no declared range is restated beside the option's name or flag (flows 1–1024, maxConcurrent 1–64, ports …)", () => {
  const found = decls.flatMap(([name, d]) => {
    // a small bound (threads: 1 | 2, an RTT of 60 s) is also a type or a figure of speech; not searched
    if ((d.max ?? 0) < 100) return [];
    const who = `(\\b${name}\\b|${quote(d.flag)}\\b)`;
    // a number in a product (128 * 1024 * 1024) is a size, not the bound
    const bound = `(?<!\\*\\s?)\\b(${d.max}|${String(d.max).replace(/\B(?=(\d{3})+$)/g, '_')})\\b(?!\\s?\\*)`;
    return restated(new RegExp(`${who}[^\\n]*${bound}|${bound}[^\\n]*${who}`));
  });
  found.push(...restated(/MAX_FLOWS\s*=\s*\d/), ...restated(/port[^\n]*\b(65535|65_535)\b/i));
  // the ranges of sizes, durations and rates once written beside their checks
  found.push(
    ...restated(/MAX_(RTT_SECONDS|BANDWIDTH_BITS)\s*=/),
    ...restated(/(duration|idle)[^\n]*\b(86400|86_400)\b|\b(10e12|65507|65_507)\b/i),
    ...restated(/\bs\s*<=?\s*(1|3600)\b|\bs\s*<\s*0\.01\b|\brttS\s*>\s*10\b/),
  );
  assert.deepEqual(found, []);
});

test("no size, duration or rate's default is written beside its flag again (--rtt … '2ms', --size … '128K')", () => {
  const found = decls.flatMap(([, d]) => {
    if (d.kind === 'count' || d.kind === 'choice' || d.default === undefined) return [];
    const again = new RegExp(`'${quote(d.flag)} [<[][^\n]*'${quote(String(d.default))}'`);
    // a scenario's --duration is its own: how long each run of it lasts
    return restated(again, (p) => !(d.flag === '--duration' && p.startsWith('bench/scenarios/')));
  });
  assert.deepEqual(found, []);
});

test('commander definitions and scenario flags of declared options come from the registry', () => {
  const flags = decls
    .filter(([, d]) => d.kind === 'count' || d.kind === 'choice')
    .map(([, d]) => quote(d.flag));
  const defined = new RegExp(
    `(\\.(option|requiredOption)\\(|new Option\\(|flags:\\s*)'(${flags.join('|')}) [<[]`,
  );
  assert.deepEqual(restated(defined), []);
});

test('one whole-number parser: no parseCount, no digits-only regex in the option parsers of policy, cli and serve', () => {
  assert.deepEqual(restated(/\bparseCount\(/), []);
  const parsers = (p: string) => p.startsWith('policy/') || p.startsWith('cli/') || p === 'serve/request.ts';
  assert.deepEqual(restated(/\\d\+\$\/|\\d\{1,\d+\}\$\/|\\s\*\\d\+\\s\*\$/, parsers), []);
});
