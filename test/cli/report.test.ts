import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SOCKBUF_ARGV } from './argv.js';

const sockbuf = (...args: string[]) =>
  spawnSync(process.execPath, [...SOCKBUF_ARGV, ...args], { encoding: 'utf8' });
const FIXTURE = 'test/fixtures/results-quick.json';

test('report prints the seed tables and verdicts, or writes the HTML page', () => {
  const text = sockbuf('report', FIXTURE);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /\[seed 002\] Bulk drain/);
  assert.match(text.stdout, /^seed 000: not reproduced — pinned rcvbuf 0\.19 ×/m);
  const out = join(mkdtempSync(join(tmpdir(), 'sockbuf-report-')), 'r.html');
  const html = sockbuf('report', FIXTURE, '--html', out);
  assert.equal(html.status, 0, html.stderr);
  assert.match(readFileSync(out, 'utf8'), /^<!doctype html>/);
});

test('a file that is not a results document: exit 2 naming the file', () => {
  const bad = join(mkdtempSync(join(tmpdir(), 'sockbuf-report-')), 'bad.json');
  writeFileSync(bad, JSON.stringify({ schema: 'sockbuf.v1', results: 3 }));
  const r = sockbuf('report', bad);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /bad\.json: not a sockbuf\.v1 results document/);
});

test('several files: each table and verdict names its file; control characters from a file or a name are shown escaped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-report-'));
  const doc = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  // a verdict that would retitle the terminal (judged again, it is not shown), a reader name that
  // would clear the screen, a C1 control sequence introducer and a bidi override
  doc.verdicts[0].text = '\u001b]0;pwned\u0007reproduced';
  doc.results[1].reader = 'fixed:8K\u001b[2J\u009b31m\u202e';
  const hostile = join(dir, 'hostile\u001b[1A.json');
  writeFileSync(hostile, JSON.stringify(doc));
  const text = sockbuf('report', hostile, FIXTURE);
  assert.equal(text.status, 0, text.stderr);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
  assert.doesNotMatch(text.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  assert.doesNotMatch(text.stdout, /pwned/);
  assert.match(text.stdout, /^fixed:8K\\x1b\[2J\\x9b31m\\u202e\s/m);
  assert.match(text.stdout, /^\[.*hostile\\x1b\[1A\.json\] seed 002: reproduced/m);
  assert.match(text.stdout, /^\[test\/fixtures\/results-quick\.json\] seed 002: reproduced/m);
  // --json: the merged document, each row naming its file, with nothing raw for a terminal
  const json = sockbuf('report', hostile, FIXTURE, '--json');
  assert.equal(json.status, 0, json.stderr);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
  assert.doesNotMatch(json.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  const merged = JSON.parse(json.stdout);
  assert.deepEqual(
    merged.files.map((f: { name: string }) => f.name),
    [hostile, FIXTURE],
  );
  assert.equal(merged.results[1].reader, 'fixed:8K\u001b[2J\u009b31m\u202e');
  assert.equal(merged.results[0].file, hostile);
  // the page's name comes back escaped too
  const page = join(dir, 'r\u001b[2J.html');
  const html = sockbuf('report', FIXTURE, '--html', page);
  assert.equal(html.status, 0, html.stderr);
  assert.match(html.stderr, /wrote .*r\\x1b\[2J\.html/);
  // an error that quotes the file: escaped as well
  const bad = join(dir, 'bad\u001b]0;x\u0007.json');
  writeFileSync(bad, '{"schema": "sockbuf.v9\\u001b[2J"}');
  const r = sockbuf('report', bad);
  assert.equal(r.status, 2);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
  assert.doesNotMatch(r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  assert.match(r.stderr, /bad\\x1b\]0;x\\x07\.json: schema 'sockbuf\.v9\\x1b\[2J' is not sockbuf\.v1/);
});
