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
import { SOCKBUF_ARGV } from './cli/argv.js';

const EXPORTS = [
  'AdaptiveSizer',
  'applyTcpBuffers',
  'applyUdpRcvbuf',
  'ceiling',
  'checkResults',
  'connect',
  'connectPinned',
  'createDgramReceiver',
  'createUdpReceiver',
  'createUdpBlast',
  'createUdpSender',
  'decodeTcpInfo',
  'DEFAULT_MAX_FRAME_BYTES',
  'DEFAULT_SERVE_PORT',
  'DEFAULT_TIMEOUT_SECONDS',
  'describeLab',
  'describeVerdict',
  'diagnose',
  'downLabs',
  'encodeFrame',
  'EnvironmentError',
  'execInLab',
  'farEndFromEnv',
  'formatBitRate',
  'formatDuration',
  'formatHostPort',
  'formatInspectSample',
  'formatReader',
  'formatSize',
  'formatTable',
  'FrameDecoder',
  'FrameError',
  'frameHeader',
  'getMemInfo',
  'getTcpInfo',
  'holdLab',
  'inspectDocument',
  'inspectSockets',
  'Iperf3Sink',
  'Lab',
  'LAB_DEFAULTS',
  'lastEvent',
  'LinuxOnlyError',
  'listen',
  'listenPinned',
  'listLabs',
  'loadResults',
  'loadScenario',
  'loadScenarios',
  'markPinned',
  'MAX_DATAGRAM',
  'mergeResults',
  'parseBitRate',
  'parseCount',
  'parseDuration',
  'parseLabSpec',
  'parseList',
  'parseListen',
  'parsePacketRate',
  'parsePercent',
  'parsePositiveDuration',
  'parseReader',
  'parseSendRate',
  'parseServer',
  'parseSize',
  'parseTo',
  'pinnedBuffers',
  'pinnedWindow',
  'printable',
  'PLACEMENT_NAMES',
  'placementOptions',
  'ProtocolError',
  'Reader',
  'registerMetrics',
  'renderHtml',
  'renderJson',
  'renderTable',
  'reportText',
  'ResolveError',
  'resolveHost',
  'resolveReader',
  'resolveSize',
  'runBench',
  'RunFailure',
  'runIperf3Blast',
  'runRemoteEnd',
  'runSuite',
  'runTcpBlast',
  'runUdpSink',
  'runUnderLab',
  'scenarioOptions',
  'SEEDS',
  'SequenceTracker',
  'ServeClient',
  'ServeRefused',
  'SOCKET_STATES',
  'socketStats',
  'socketStatsFrom',
  'startExporter',
  'alertRules',
  'rulesYaml',
  'startServer',
  'startTcpSink',
  'statsDelta',
  'StatsSampler',
  'SUITE',
  'suiteExitCode',
  'SysError',
  'TcpConnection',
  'TcpServer',
  'TcpSink',
  'UDP_RCVBUF_TARGET',
  'udpOffload',
  'UdpReceiver',
  'UdpBlast',
  'UdpSender',
  'UdpSendError',
  'upLab',
  'UsageError',
  'verdicts',
  'VERSION',
  'WARM_UP_SECONDS',
  'watchSockets',
  'windowFor',
  'withLab',
];

test('the public exports are the pinned list (change both together, deliberately)', () => {
  assert.deepEqual(Object.keys(sockbuf).sort(), [...EXPORTS].sort());
});

const ROOT = fileURLToPath(new URL('../', import.meta.url));
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

test("importing 'sockbuf' loads neither commander, cli-progress nor chart.js", () => {
  assert.deepEqual(heavy(loads(ENTRY)), []);
  // the check can fail: the CLI's program module does load commander
  const program = ENTRY.replace(/index\.(js|ts)$/, 'cli/program.$1');
  assert.ok(heavy(loads(program)).includes('commander'), 'the load recorder saw no commander');
});
