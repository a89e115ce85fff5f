// How long `sockbuf report FILE --html OUT` (or the text report, --text) takes on large results files,
// with its peak RSS and the size of what it wrote. Each size is one fresh process of a built CLI (dist/,
// so `npm run build` first) timed by /usr/bin/time: wall seconds and CPU seconds (user + system; on a
// shared machine the wall time also counts the time other processes held the CPUs). A second process
// times the phases with process.cpuUsage: reading and checking the file (loadResults), and rendering
// (renderHtml / reportText). The rows are the hand-written fixture's 46 (every scenario, lab and
// loopback) repeated with distinct sizes, rates, readers and socket counts, so that every table, chart
// axis and Δ-vs-auto lookup grows with the file. --cli PATH times another build on the same files (a
// baseline: an older commit's dist/cli/main.js, built in a worktree of its own; no phases then).
//   node --import tsx scripts/report-bench.ts [--rows 1000,40000,200000] [--text] [--keep DIR] [--cli PATH]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const text = process.argv.includes('--text');
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

type Row = Record<string, unknown>;
const fixture = join(root, 'test/fixtures/results-hand.json');

/** `n` rows: the fixture's, the k-th copy with its size, rate, reader and socket count made distinct. */
function rows(base: Row[], n: number): Row[] {
  const out: Row[] = [];
  for (let i = 0; out.length < n; i++) {
    const r: Row = { ...base[i % base.length] };
    const k = Math.floor(i / base.length);
    if (k > 0) {
      if (typeof r.size === 'string') r.size = String(Number(r.size) + k);
      if (typeof r.rate === 'string' && r.rate !== 'max') r.rate = String(Number(r.rate) + k);
      if (typeof r.reader === 'string') r.reader = `${r.reader}#${k}`;
      if (typeof r.sockets === 'string') r.sockets = String(Number(r.sockets) + k);
    }
    out.push(r);
  }
  return out;
}

/** In a child: the CPU seconds of loading FILE and of rendering it, with the built modules. */
async function phases(file: string): Promise<void> {
  const dist = (m: string) => pathToFileURL(join(root, 'dist', m)).href;
  const { loadResults } = await import(dist('bench/report/results.js'));
  const { renderHtml, reportText } = await import(dist('bench/pages.js'));
  let t = cpu();
  const [doc] = loadResults([file]);
  const loadSeconds = cpu() - t;
  t = cpu();
  (text ? reportText : renderHtml)(doc);
  const renderSeconds = cpu() - t;
  process.stdout.write(JSON.stringify({ loadSeconds, renderSeconds }));
}

/** The CLI on FILE, timed; then its phases. */
function measure(n: number, file: string, dir: string) {
  const out = join(dir, `rows-${n}.${text ? 'txt' : 'html'}`);
  const cli = arg('--cli') ?? join(root, 'dist/cli/main.js');
  const started = process.hrtime.bigint();
  const run = spawnSync(
    '/usr/bin/time',
    ['-f', '%U %S %M', process.execPath, cli, 'report', file, ...(text ? [] : ['--html', out])],
    { encoding: 'utf8', maxBuffer: 2 ** 31 - 1, timeout: 15 * 60_000 },
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (run.status !== 0) throw new Error(`${n} rows: exit ${run.status} ${run.signal ?? ''}: ${run.stderr}`);
  if (text) writeFileSync(out, run.stdout);
  const [user, sys, peakKiB] = (run.stderr.trim().split('\n').pop() ?? '').split(' ').map(Number);
  const split = arg('--cli')
    ? {}
    : JSON.parse(
        spawnSync(
          process.execPath,
          ['--import', 'tsx', fileURLToPath(import.meta.url), '--phases', file, ...(text ? ['--text'] : [])],
          { encoding: 'utf8', maxBuffer: 2 ** 20, timeout: 15 * 60_000 },
        ).stdout,
      );
  const round = (v: number) => Number(v.toFixed(2));
  return {
    rows: n,
    seconds: round(seconds),
    cpuSeconds: round(user + sys),
    ...(split.loadSeconds === undefined
      ? {}
      : { loadCpuSeconds: round(split.loadSeconds), renderCpuSeconds: round(split.renderSeconds) }),
    peakRssMiB: Math.round(peakKiB / 1024),
    fileMiB: round(statSync(file).size / 2 ** 20),
    outMiB: round(statSync(out).size / 2 ** 20),
  };
}

const only = arg('--phases');
if (only) await phases(only);
else {
  const sizes = (arg('--rows') ?? '1000,40000,200000').split(',').map(Number);
  const keep = arg('--keep');
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'sockbuf-report-bench-'));
  const figures = [];
  try {
    for (const n of sizes) {
      const doc = JSON.parse(readFileSync(fixture, 'utf8'));
      doc.results = rows(doc.results, n);
      const file = join(dir, `rows-${n}.json`);
      writeFileSync(file, JSON.stringify(doc));
      figures.push(measure(n, file, dir));
      process.stderr.write(`${JSON.stringify(figures[figures.length - 1])}\n`);
    }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  console.table(figures);
}
