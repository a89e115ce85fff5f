import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  checkResults,
  loadResults,
  type ResultsDocument,
  rowsOf,
} from '../../../src/bench/report/results.js';
import { mergeResults, sources } from '../../../src/bench/report/sources.js';

const doc = (kernel: string, rows: Record<string, unknown>[], extra = {}): ResultsDocument =>
  checkResults({
    schema: 'sockbuf.v1',
    version: '0.1.0',
    command: `bench on ${kernel}`,
    params: { placement: { name: 'lab', rttUs: kernel === 'a' ? 2000 : 10000 } },
    host: { kernel, cpus: kernel === 'a' ? 2 : 8, sysctls: { 'net.core.rmem_max': kernel } },
    results: rows,
    ...extra,
  });

/** Two results files as `sockbuf report A B` reads them. */
function twoFiles(): { files: string[]; docs: ResultsDocument[] } {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-sources-'));
  const files = [join(dir, 'a.json'), join(dir, 'b.json')];
  writeFileSync(files[0], JSON.stringify(doc('a', [{ scenario: 'tcp', policy: 'auto', size: '8192' }])));
  writeFileSync(
    files[1],
    JSON.stringify(
      doc('b', [{ scenario: 'tcp', policy: 'rcvbuf:229376', size: '8192', placement: 'lab' }], {
        skipped: [{ scenario: 'udp', reason: 'not root' }],
        verdicts: [{ seed: '000', text: 'seed 000: reproduced', ok: true }],
      }),
    ),
  );
  return { files, docs: loadResults(files) };
}

test('a merge names the file of every row and skip and keeps every file host, command and parameters', () => {
  const { files, docs } = twoFiles();
  const m = mergeResults(docs);
  assert.deepEqual(
    m.results.map((r) => r.file),
    files,
  );
  assert.deepEqual(m.skipped, [{ scenario: 'udp', reason: 'not root', file: files[1] }]);
  const kept = (m.files as { name: string; host: { kernel: string; cpus: number }; command: string }[]).map(
    (f) => [f.name, f.host.kernel, f.host.cpus, f.command],
  );
  assert.deepEqual(kept, [
    [files[0], 'a', 2, 'bench on a'],
    [files[1], 'b', 8, 'bench on b'],
  ]);
  assert.equal(m.command, 'bench on a + bench on b');
  // verdicts are judged again from each file's rows, never carried over from one file to the merge
  assert.equal(m.verdicts, undefined);
  assert.equal(rowsOf(m, 'tcp', 'local').length, 1);
  assert.equal(rowsOf(m, 'tcp', 'lab').length, 1);
});

test('a merged document splits back into its files, also after it was written and read again', () => {
  const { files, docs } = twoFiles();
  const again = checkResults(JSON.parse(JSON.stringify(mergeResults(docs))));
  const parts = sources(again);
  assert.deepEqual(
    parts.map((p) => [p.file, p.doc.host.kernel, p.doc.results.length, p.doc.skipped?.length]),
    [
      [files[0], 'a', 1, 0],
      [files[1], 'b', 1, 1],
    ],
  );
  // each file keeps its own parameters (the lab's RTT differs)
  assert.deepEqual(
    parts.map((p) => (p.doc.params.placement as { rttUs: number }).rttUs),
    [2000, 10000],
  );
  // a merge of a merge keeps the names; a name given twice is told apart
  const m = mergeResults([again, docs[0]]);
  assert.deepEqual(
    sources(m).map((p) => p.file),
    [files[0], files[1], `${files[0]} (2)`],
  );
  // one document is its own single part, unnamed
  assert.deepEqual(
    sources(docs[0]).map((p) => p.file),
    [undefined],
  );
  // names given by the caller win over the files; documents made in memory are numbered
  assert.deepEqual(
    sources(mergeResults(docs, ['x', 'y'])).map((p) => p.file),
    ['x', 'y'],
  );
  const made = [doc('a', []), doc('b', [])];
  assert.deepEqual(
    sources(mergeResults(made)).map((p) => p.file),
    ['results 1', 'results 2'],
  );
});

test("rows that name no file of the merge are kept apart, never credited to a file; a 'files' that is not a list of files is ignored", () => {
  const { docs } = twoFiles();
  const m = mergeResults(docs);
  m.results.push({ scenario: 'tcp', policy: 'auto', file: 'nowhere.json' });
  const parts = sources(m);
  assert.equal(parts.length, 3);
  assert.match(parts[2].file ?? '', /name no file/);
  assert.equal(parts[2].doc.results.length, 1);
  for (const files of [3, 'x', [{ host: {} }], [{ name: 'only one' }], [{ name: 1 }, { name: 2 }]]) {
    const d = { ...docs[0], files };
    assert.deepEqual(sources(d), [{ doc: d }], JSON.stringify(files));
  }
  // the schema reads a merged file as any other sockbuf.v1 document
  const text = JSON.stringify(m);
  assert.equal(checkResults(JSON.parse(text)).results.length, 3);
});
