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
  assert.match(text.stdout, /^seed 000: pinned rcvbuf/m);
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
