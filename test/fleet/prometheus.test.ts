// Issue 24: the real Prometheus (Debian's `prometheus` binary, on loopback, storage in a temp dir,
// 1 s scrape and evaluation intervals) scrapes a real `sockbuf exporter` and an application that
// uses sockbuf (registerMetrics through startExporter({ own: true })), and evaluates the shipped
// rules. Meanwhile this test makes a pinned socket carry load and floods a small UDP receive buffer.
// The pinned-socket and UDP-drop alerts must reach `firing` in Prometheus's own /api/v1/alerts, and
// every panel query of docs/deploy/grafana-sockbuf-fleet.json must return data against the standalone
// exporter, and of grafana-sockbuf-app.json against the application.
//
// The rules are docs/deploy/sockbuf-rules.yml with every `for:` cut to 1s (the shipped 5m/10m would make a
// test of minutes); the expressions are the shipped ones, unchanged. Everything started here (the
// prometheus and exporter processes by pid, sockets, the temp dir) is removed in `finally`.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcryptjs';
import { freePort } from '../../scripts/lib/ports.js';
import { connect, createUdpReceiver, createUdpSender, listenPinned } from '../../src/index.js';
import { startExporter } from '../../src/tools.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';
import {
  type Alert,
  type Prometheus,
  type Running,
  rulesWithShortFor,
  run,
  startPrometheus,
  stop,
} from '../lib/prometheus.js';

const DOCS = new URL('../../docs/deploy/', import.meta.url);
/** How long the alerts get to fire: flags need two scrapes, then `for` (1s) and an evaluation. */
const DEADLINE_MS = 45_000;

/** A plain Node server whose connections read 64 KiB every 5 ms: slower than a loopback sender. */
function slowServer(): net.Server {
  const timers = new Set<NodeJS.Timeout>();
  const server = net.createServer((c) => {
    c.pause();
    const t = setInterval(() => c.read(65536), 5);
    timers.add(t);
    c.on('close', () => clearInterval(t));
    c.on('error', () => {});
  });
  server.on('close', () => {
    for (const t of timers) clearInterval(t);
  });
  return server;
}

test('a real Prometheus fires the pinned-socket and UDP-drop alerts and answers every dashboard query', {
  timeout: 90_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-prometheus-'));
  const stopping = new AbortController();
  const cleanup: (() => unknown)[] = [];
  const waits: Promise<unknown>[] = [];
  let exporter: Running | undefined;
  let prometheus: Prometheus | undefined;
  try {
    // Prometheus starts first: it scrapes nothing before its target discovery's first update, which
    // comes about 5 s after start (fixed in Prometheus 2.42); the exporter and the load start meanwhile
    const [exporterPort, promPort] = [await freePort(), await freePort()];
    const app = await startExporter({ port: 0, own: true, hostCounters: false, top: 0 });
    cleanup.push(() => app.close());
    const exporterTarget = `127.0.0.1:${exporterPort}`;
    const appTarget = new URL(app.url).host;
    // the shipped rules (docs/deploy/sockbuf-rules.yml is rulesYaml(): test/observe/alerts.test.ts) with `for` cut to 1s
    const { text, fors } = rulesWithShortFor();
    assert.equal(
      fors,
      (text.match(/^ {6}- alert: /gm) ?? []).length,
      'every shipped rule has a for: of minutes',
    );
    // the application: sockbuf's own sockets (registerMetrics), the dashboard's in-process panels
    prometheus = startPrometheus(dir, promPort, { sockbuf: [exporterTarget], app: [appTarget] });
    const { api, started } = prometheus;
    // the exporter as installed: the CLI
    exporter = run(process.execPath, [
      ...SOCKBUF_ARGV,
      'exporter',
      '--listen',
      exporterTarget,
      '--top',
      '1000',
    ]);

    // a pinned receive buffer (8 KiB, before listen: accepted sockets inherit it) under load from a
    // sockbuf connection that writes as fast as the slow reader lets it, bounded by the abort below
    const server = slowServer();
    cleanup.push(() => server.close());
    await listenPinned(server, { host: '127.0.0.1', port: 0 }, { rcvbuf: 8192 });
    const tcpPort = (server.address() as net.AddressInfo).port;
    const conn = await connect({ host: '127.0.0.1', port: tcpPort });
    cleanup.push(() => conn.socket.destroy());
    const chunk = Buffer.alloc(65536, 7);
    const pump = () => {
      while (!stopping.signal.aborted && conn.socket.write(chunk));
    };
    conn.socket.on('drain', pump);
    conn.socket.on('error', () => {});
    pump();

    // a UDP receiver with a small buffer that takes one batch every 100 ms, flooded at 20 k/s until the
    // end (the interval is cleared in finally)
    const rx = await createUdpReceiver({ listen: '127.0.0.1:0', rcvbuf: '64K', batch: 64 });
    cleanup.push(() => rx.close());
    const udpPort = rx.port;
    const consuming = (async () => {
      for await (const _ of rx) {
        if (stopping.signal.aborted) break;
        await sleep(100);
      }
    })().catch(() => {});
    waits.push(consuming);
    const tx = await createUdpSender({ type: 'udp4' });
    cleanup.push(() => tx.close());
    const burst = Array.from({ length: 200 }, () => Buffer.alloc(512, 1));
    const flood = setInterval(() => {
      try {
        tx.trySendBatch(burst, `127.0.0.1:${udpPort}`); // 200 every 10 ms: 20 k/s
      } catch {
        // a refused send shows as the UDP alerts not firing
      }
    }, 10);
    cleanup.push(() => clearInterval(flood));

    for (let i = 0; i < 300 && !/serving http/.test(exporter.log()); i++) await sleep(50);
    assert.match(
      exporter.log(),
      new RegExp(`serving http://${exporterTarget}/metrics`),
      'the exporter started',
    );
    // a first sample while the load runs, so that Prometheus's first scrape has ratios over an interval
    await (await fetch(`http://${exporterTarget}/metrics`)).text();

    // ready: the TSDB is open (503 before)
    await prometheus.ready(DEADLINE_MS);

    // the alerts that must fire, each matched by its labels
    const wanted: Record<string, Record<string, string>> = {
      SockbufRwndLimitedByPinnedReceiveBuffer: { role: 'client', port: String(tcpPort), job: 'sockbuf' },
      SockbufReceiveBufferPinned: { role: 'listener', port: String(tcpPort), job: 'sockbuf' },
      SockbufUdpSocketDrops: { protocol: 'udp', port: String(udpPort), job: 'sockbuf' },
      SockbufUdpReceiveBufferErrors: { instance: exporterTarget, job: 'sockbuf' },
    };
    let alerts: Alert[] = [];
    const find = (name: string) =>
      alerts.find(
        (a) =>
          a.labels.alertname === name &&
          a.state === 'firing' &&
          Object.entries(wanted[name]).every(([k, v]) => a.labels[k] === v),
      );
    while (performance.now() - started < DEADLINE_MS) {
      alerts = await prometheus.alerts();
      process.stderr.write(
        `${((performance.now() - started) / 1000).toFixed(1)} ${Object.keys(wanted)
          .map(
            (n) =>
              n.slice(6, 14) +
              ':' +
              (find(n) ? 'F' : (alerts.find((a) => a.labels.alertname === n)?.state ?? '-')),
          )
          .join(' ')}\n`,
      );
      if (Object.keys(wanted).every(find)) break;
      await sleep(250);
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const seen = JSON.stringify(
      alerts.map((a) => ({ ...a.labels, state: a.state })),
      null,
      1,
    );
    for (const name of Object.keys(wanted))
      assert.ok(find(name), `${name} not firing after ${seconds}s: ${seen}`);
    // the socket alerts name the process: this one (owner_info from /proc/PID/fd)
    assert.match(
      find('SockbufRwndLimitedByPinnedReceiveBuffer')?.annotations.summary ?? '',
      new RegExp(`\\(node, pid ${process.pid}\\)`),
    );
    // the pinning process, the size it pinned to and what autotuning would offer
    assert.match(
      find('SockbufReceiveBufferPinned')?.annotations.summary ?? '',
      new RegExp(
        `^node \\(pid ${process.pid}\\) pinned the receive buffer of .* to \\d+ bytes where autotuning offers up to \\d+`,
      ),
    );
    assert.match(
      find('SockbufUdpReceiveBufferErrors')?.annotations.description ?? '',
      new RegExp(`Sockets dropping: .*127\\.0\\.0\\.1:${udpPort} `),
    );
    process.stderr.write(`# alerts firing ${seconds}s after Prometheus started\n`);

    // every panel query of each dashboard, as Grafana sends it with its instance picked: the fleet
    // dashboard's against the standalone exporter alone, the application one's against the app
    const panelQueries = (file: string) => {
      const exprs: string[] = [];
      const walk = (panels: { targets?: { expr?: string }[]; panels?: unknown[] }[]) => {
        for (const p of panels) {
          for (const t of p.targets ?? []) if (t.expr) exprs.push(t.expr);
          walk((p.panels ?? []) as typeof panels);
        }
      };
      walk(JSON.parse(readFileSync(new URL(file, DOCS), 'utf8')).panels);
      return exprs;
    };
    const empty: string[] = [];
    let count = 0;
    for (const [file, instance] of [
      ['grafana-sockbuf-fleet.json', exporterTarget],
      ['grafana-sockbuf-app.json', appTarget],
    ]) {
      for (const expr of panelQueries(file)) {
        count++;
        const q = expr
          .replaceAll('$instance', instance.replaceAll('.', '\\\\.'))
          .replaceAll('$__rate_interval', '10s');
        assert.doesNotMatch(q, /\$/, 'every dashboard variable substituted');
        const data = (await api(`query?query=${encodeURIComponent(q)}`)) as { result: unknown[] };
        if (data.result.length === 0) empty.push(`${file}: ${q}`);
      }
    }
    assert.ok(count >= 20, `${count} panel queries`);
    assert.deepEqual(empty, [], 'every panel query returns data');
    // the fleet dashboard's variable: label_values(sockbuf_sockets, instance)
    const instances = (await api(`label/instance/values?match[]=sockbuf_sockets`)) as string[];
    assert.ok(instances.includes(exporterTarget), instances.join(', '));
  } finally {
    stopping.abort();
    await stop(prometheus);
    await stop(exporter);
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => {});
    await Promise.race([Promise.all(waits), sleep(5000)]);
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 36: the same Prometheus scrapes sockbuf over TLS with basic auth, from a web configuration in
// exporter-toolkit's format (certificate made here with openssl), while a second job with a wrong
// password gets 401 and no metrics; curl, a TLS client sockbuf did not write, is let in and turned
// away the same way. The exporter runs with --no-host-counters beside a real node_exporter 1.5 with
// its default netstat fields: TcpExt_TCPMemoryPressures is missing, so the guard for it must fire and
// name the flag, and the guards for the series node_exporter does export must not. Then the exporter
// is stopped and SockbufExporterDown must fire.
test('over TLS with basic auth: a wrong password gets 401, a missing series and a stopped exporter fire their guards', {
  timeout: 90_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-prometheus-tls-'));
  let exporter: Running | undefined;
  let node: Running | undefined;
  let prometheus: Prometheus | undefined;
  try {
    const [exporterPort, nodePort, promPort] = [await freePort(), await freePort(), await freePort()];
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1']
        .concat(['-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt'), '-subj', '/CN=sockbuf'])
        .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
      { stdio: 'ignore' },
    );
    const password = 'scrape-me';
    writeFileSync(
      join(dir, 'web.yml'),
      `tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n` +
        `basic_auth_users:\n  prometheus: ${bcrypt.hashSync(password, 10)}\n`,
    );
    const target = `127.0.0.1:${exporterPort}`;
    const tlsJob = (pass: string) => ({
      scheme: 'https',
      tls_config: { ca_file: join(dir, 'tls.crt') },
      basic_auth: { username: 'prometheus', password: pass },
      static_configs: [{ targets: [target] }],
    });
    prometheus = startPrometheus(dir, promPort, {
      sockbuf: tlsJob(password),
      'sockbuf-wrong-password': tlsJob('guess'),
      node: [`127.0.0.1:${nodePort}`],
    });
    const { api, started } = prometheus;
    node = run('prometheus-node-exporter', [
      `--web.listen-address=127.0.0.1:${nodePort}`,
      '--collector.disable-defaults',
      '--collector.netstat',
      '--collector.softnet',
    ]);
    node.child.on('error', (e) =>
      assert.fail(`node_exporter: ${e.message} (Debian package prometheus-node-exporter)`),
    );
    exporter = run(process.execPath, [
      ...SOCKBUF_ARGV,
      'exporter',
      '--listen',
      target,
      '--no-host-counters',
      '--web.config.file',
      join(dir, 'web.yml'),
    ]);
    for (let i = 0; i < 300 && !/serving https/.test(exporter.log()); i++) await sleep(50);
    assert.match(exporter.log(), new RegExp(`serving https://${target}/metrics`), 'the exporter started');

    // curl: the right password gets metrics over TLS, a wrong one 401 with WWW-Authenticate and none
    const curl = (user: string) =>
      new Promise<string>((resolve) =>
        execFile(
          'curl',
          [
            '-sS',
            '-D',
            '-',
            '--max-time',
            '10',
            '--cacert',
            join(dir, 'tls.crt'),
            '-u',
            user,
            `https://${target}/metrics`,
          ],
          { encoding: 'utf8' },
          (err, stdout, stderr) => resolve(err ? `${stdout}${stderr}` : stdout),
        ),
      );
    const ok = await curl(`prometheus:${password}`);
    assert.match(ok, /^HTTP\/1\.1 200/);
    assert.match(ok, /^sockbuf_build_info\{/m);
    const refused = await curl('prometheus:guess');
    assert.match(refused, /^HTTP\/1\.1 401/);
    assert.match(refused, /^www-authenticate: Basic/im);
    assert.doesNotMatch(refused, /sockbuf_/);

    const until = async (what: string, done: (a: Alert[]) => boolean) => {
      let seen: Alert[] = [];
      while (performance.now() - started < DEADLINE_MS * 1.5) {
        assert.equal(prometheus?.child.exitCode, null, `prometheus exited: ${prometheus?.log()}`);
        seen = await (prometheus as Prometheus).alerts().catch(() => []);
        if (done(seen)) return seen;
        await sleep(250);
      }
      assert.fail(
        `${what} after ${((performance.now() - started) / 1000).toFixed(1)}s: ${JSON.stringify(seen.map((a) => ({ ...a.labels, state: a.state })))}`,
      );
    };
    const firing = (a: Alert[], name: string, labels: Record<string, string> = {}) =>
      a.filter(
        (x) =>
          x.labels.alertname === name &&
          x.state === 'firing' &&
          Object.entries(labels).every(([k, v]) => x.labels[k] === v),
      );
    const pressure = { series: 'node_netstat_TcpExt_TCPMemoryPressures', instance: target, job: 'sockbuf' };
    const guards = await until(
      'SockbufSeriesAbsent for TCPMemoryPressures not firing',
      (a) => firing(a, 'SockbufSeriesAbsent', pressure).length > 0,
    );
    assert.match(
      firing(guards, 'SockbufSeriesAbsent', pressure)[0].annotations.description,
      /--collector\.netstat\.fields='[^']*TCPMemoryPressures/,
    );
    // node_exporter exports the others: their guards stay quiet
    assert.deepEqual(
      guards.filter((a) => a.labels.alertname === 'SockbufSeriesAbsent').map((a) => a.labels.series),
      ['node_netstat_TcpExt_TCPMemoryPressures'],
    );

    // Prometheus's own view: the TLS job up, the wrong password's job down with a 401
    const targets = (await api('targets')) as {
      activeTargets: { labels: { job: string }; health: string; lastError: string }[];
    };
    const job = (name: string) => targets.activeTargets.find((t) => t.labels.job === name);
    assert.equal(job('sockbuf')?.health, 'up', job('sockbuf')?.lastError);
    assert.equal(job('sockbuf-wrong-password')?.health, 'down');
    assert.match(job('sockbuf-wrong-password')?.lastError ?? '', /401/);
    const wrongSeries = (await api(
      `query?query=${encodeURIComponent('count({job="sockbuf-wrong-password",__name__=~"sockbuf_.+"})')}`,
    )) as { result: unknown[] };
    assert.deepEqual(wrongSeries.result, [], 'no sockbuf series through the wrong password');

    // the exporter stops: its scrape fails, and the down guard fires for it (not for the job that never got in)
    await stop(exporter);
    const down = await until(
      'SockbufExporterDown not firing',
      (a) => firing(a, 'SockbufExporterDown').length > 0,
    );
    assert.deepEqual(
      firing(down, 'SockbufExporterDown').map((a) => `${a.labels.job} ${a.labels.instance}`),
      [`sockbuf ${target}`],
    );
    process.stderr.write(
      `# guards fired ${((performance.now() - started) / 1000).toFixed(1)}s after Prometheus started\n`,
    );
  } finally {
    await stop(prometheus);
    await stop(exporter);
    await stop(node);
    rmSync(dir, { recursive: true, force: true });
  }
});
