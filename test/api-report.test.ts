// The public surface's reports (etc/*.api.md, written by api-extractor: `npm run api`) hold no value that
// returns an untyped record: every result of sockbuf, sockbuf/tools and sockbuf/dgram has an interface
// (issue 38: runTcpBlast, Sink.stop and Diagnosis.document() once returned Record<string, unknown>).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const ETC = new URL('../etc/', import.meta.url);

/** The lines of an API report where a function, method or callback returns Record<string, unknown>. */
function untypedReturns(report: string): string[] {
  const returns = /(\)|=>)\s*:?\s*(Promise<)?Record<string, unknown>(\[\])?>?\s*[;,)]/;
  return report
    .split('\n')
    .filter((line) => returns.test(line))
    .map((line) => line.trim());
}

test('the search finds an untyped result where it is written (a method, a function, a callback, a promise)', () => {
  assert.deepEqual(
    untypedReturns(
      [
        '    document(): Record<string, unknown>;',
        'export function runTcpBlast(opts: TcpBlastOptions): Promise<Record<string, unknown>>;',
        '    onLine: (line: string) => Record<string, unknown>;',
        // a parameter or a field of that type is no result
        '    params: Record<string, unknown>;',
        '    params: (opts: Record<string, unknown>) => P;',
      ].join('\n'),
    ),
    [
      'document(): Record<string, unknown>;',
      'export function runTcpBlast(opts: TcpBlastOptions): Promise<Record<string, unknown>>;',
      'onLine: (line: string) => Record<string, unknown>;',
    ],
  );
});

test('no value of the public surface returns Record<string, unknown> (etc/*.api.md)', () => {
  const reports = readdirSync(ETC).filter((f) => f.endsWith('.api.md'));
  assert.ok(reports.includes('sockbuf-tools.api.md'), 'the reports are where api-extractor writes them');
  const found = reports.flatMap((f) =>
    untypedReturns(readFileSync(new URL(f, ETC), 'utf8')).map((l) => `${f}: ${l}`),
  );
  assert.deepEqual(found, []);
});
