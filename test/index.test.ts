// The public entry: what `import … from 'sockbuf'` gives (pinned, so that changing it is deliberate),
// and what it loads (lean: the CLI's, the progress bar's and the report's packages stay out of it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as sockbuf from '../src/index.js';
import * as tools from '../src/tools.js';
import { SOCKBUF_ARGV } from './cli/argv.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

// `sockbuf`: what an application builds on.
const APP_EXPORTS = [
  'applyTcpBuffers',
  'applyUdpRcvbuf',
  'ceiling',
  'connect',
  'connectPinned',
  'createUdpReceiver',
  'createUdpSender',
  'encodeFrame',
  'EnvironmentError',
  'FrameDecoder',
  'FrameError',
  'LinuxOnlyError',
  'listen',
  'listenPinned',
  'registerMetrics',
  'ResolveError',
  'SockbufError',
  'socketStats',
  'StatsSampler',
  'SysError',
  'TcpConnection',
  'TcpServer',
  'UdpReceiver',
  'UdpSender',
  'UdpSendError',
  'UsageError',
  'windowFor',
];

// `sockbuf/tools`: the instruments.
const TOOLS_EXPORTS = [
  'decodeTcpInfo',
  'formatBitRate',
  'formatDuration',
  'formatSize',
  'frameHeader',
  'getMemInfo',
  'getTcpInfo',
  'markPinned',
  'MAX_DATAGRAM',
  'parseBitRate',
  'parseDuration',
  'parsePacketRate',
  'parseSize',
  'pinnedWindow',
  'AdaptiveSizer',
  'alertRules',
  'checkResults',
  'createUdpBlast',
  'diagnose',
  'downLabs',
  'execInLab',
  'holdLab',
  'inspectSockets',
  'Iperf3Sink',
  'Lab',
  'listLabs',
  'loadResults',
  'mergeResults',
  'PeerError',
  'renderHtml',
  'renderTable',
  'rulesYaml',
  'runBench',
  'RunFailure',
  'runIperf3Blast',
  'runRemoteEnd',
  'runSuite',
  'runTcpBlast',
  'runUdpSink',
  'runUnderLab',
  'SEEDS',
  'startExporter',
  'startServer',
  'startTcpSink',
  'SUITE',
  'TcpSink',
  'UdpBlast',
  'upLab',
  'watchSockets',
  'withLab',
];

test('the two entries export the pinned lists (change both together, deliberately), and share no name', () => {
  assert.deepEqual(Object.keys(sockbuf).sort(), [...APP_EXPORTS].sort());
  assert.deepEqual(Object.keys(tools).sort(), [...TOOLS_EXPORTS].sort());
  assert.deepEqual(
    APP_EXPORTS.filter((n) => TOOLS_EXPORTS.includes(n)),
    [],
  );
});

/** The names an entry's source exports, types included (`export { a, type B } from …`, `export type { C }`). */
export function exportedNames(source: string): string[] {
  return [...source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1]
      .split(',')
      .map((item) => item.trim().replace(/^type\s+/, ''))
      .filter(Boolean)
      .map((item) => item.split(/\s+as\s+/).pop() as string),
  );
}

test("the application entry exports at most 50 names, types included; the instruments are in 'sockbuf/tools'", () => {
  assert.deepEqual(
    exportedNames("export { a, type B as C } from './x.js';\nexport type {\n  D,\n} from './y.js';"),
    ['a', 'C', 'D'],
  );
  const app = exportedNames(readFileSync(join(ROOT, 'src/index.ts'), 'utf8'));
  assert.ok(app.length <= 50, `src/index.ts exports ${app.length} names`);
  for (const name of Object.keys(sockbuf)) assert.ok(app.includes(name), `${name} not seen by the counter`);
  // none of the benchmark tool's internals or environment readers in the application's entry
  for (const name of ['runBench', 'farEndFromEnv', 'WARM_UP_SECONDS', 'startExporter', 'diagnose'])
    assert.ok(!app.includes(name), `${name} is in the application entry`);
});

const REGISTER = pathToFileURL(join(ROOT, 'test/fixtures/loads/register.mjs')).href;
// the built entry when the CLI tests use the build (npm test builds first), else the source through tsx
const fromDist = SOCKBUF_ARGV[0].endsWith('.js');
const ENTRY = pathToFileURL(join(ROOT, fromDist ? 'dist/index.js' : 'src/index.ts')).href;
const HEAVY = ['commander', 'cli-progress', 'chart.js'];

/** The files a fresh process loads (ESM resolves and CommonJS requires) to import `url`. */
function loads(url: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-loads-'));
  try {
    const file = join(dir, 'loads');
    const script = `import { createRequire } from 'node:module'; import { appendFileSync } from 'node:fs';
      await import(${JSON.stringify(url)});
      appendFileSync(process.env.SOCKBUF_LOADS_FILE, Object.keys(createRequire(import.meta.url).cache).join('\\n') + '\\n');`;
    const r = spawnSync(
      process.execPath,
      [...(fromDist ? [] : ['--import', 'tsx']), '--import', REGISTER, '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60_000, cwd: ROOT, env: { ...process.env, SOCKBUF_LOADS_FILE: file } },
    );
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const heavy = (files: string[]) =>
  HEAVY.filter((pkg) => files.some((f) => f.includes(`/node_modules/${pkg}/`)));

test("importing 'sockbuf' or 'sockbuf/tools' loads neither commander, cli-progress nor chart.js", () => {
  assert.deepEqual(heavy(loads(ENTRY)), []);
  assert.deepEqual(heavy(loads(ENTRY.replace(/index\.(js|ts)$/, 'tools.$1'))), []);
  // the check can fail: the CLI's program module does load commander
  const program = ENTRY.replace(/index\.(js|ts)$/, 'cli/program.$1');
  assert.ok(heavy(loads(program)).includes('commander'), 'the load recorder saw no commander');
});
