// Issue 24: the real Prometheus (Debian's `prometheus` binary, on loopback, storage in a temp dir,
// 1 s scrape and evaluation intervals) scrapes a real `sockbuf exporter` and an application that
// uses sockbuf (registerMetrics through startExporter({ own: true })), and evaluates the shipped
// rules. Meanwhile this test makes a pinned socket carry load and floods a small UDP receive buffer.
// The pinned-socket and UDP-drop alerts must reach `firing` in Prometheus's own /api/v1/alerts, and
// every panel query of docs/grafana-sockbuf.json must evaluate without error and return data.
//
// The rules are docs/sockbuf-rules.yml with every `for:` cut to 1s (the shipped 5m/10m would make a
// test of minutes); the expressions are the shipped ones, unchanged. Everything started here (the
// prometheus and exporter processes by pid, sockets, the temp dir) is removed in `finally`.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/ports.js';
import { connect, createUdpReceiver, createUdpSender, listenPinned } from '../../src/index.js';
import { startExporter } from '../../src/tools.js';
import { SOCKBUF_ARGV } from '../cli/argv.js';

const DOCS = new URL('../../docs/', import.meta.url);
/** How long the alerts get to fire: flags need two scrapes, then `for` (1s) and an evaluation. */
const DEADLINE_MS = 45_000;

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

/** A child whose output is kept for the failure message; resolves its exit. */
function run(cmd: string, args: string[]) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d) => (log = (log + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, exited, log: () => log };
}

async function stop(p: { child: ChildProcess; exited: Promise<number | null> } | undefined) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(t);
}

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
  let exporter: ReturnType<typeof run> | undefined;
  let prometheus: ReturnType<typeof run> | undefined;
  try {
    // Prometheus starts first: it scrapes nothing before its target discovery's first update, which
    // comes about 5 s after start (fixed in Prometheus 2.42); the exporter and the load start meanwhile
    const [exporterPort, promPort] = [await freePort(), await freePort()];
    const app = await startExporter({ port: 0, own: true, hostCounters: false, top: 0 });
    cleanup.push(() => app.close());
    const exporterTarget = `127.0.0.1:${exporterPort}`;
    const appTarget = new URL(app.url).host;
    // the shipped rules with `for` cut to 1s
    const shipped = readFileSync(new URL('sockbuf-rules.yml', DOCS), 'utf8');
    const fors = shipped.match(/^ {8}for: "\d+m"$/gm) ?? [];
    assert.equal(fors.length, 9, 'every shipped rule has a for: of minutes');
    writeFileSync(join(dir, 'rules.yml'), shipped.replace(/^( {8}for: )"\d+m"$/gm, '$1"1s"'));
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      rule_files: [join(dir, 'rules.yml')],
      scrape_configs: [
        { job_name: 'sockbuf', static_configs: [{ targets: [exporterTarget] }] },
        // the application: sockbuf's own sockets (registerMetrics), the dashboard's in-process panels
        { job_name: 'app', static_configs: [{ targets: [appTarget] }] },
      ],
    };
    writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config)); // JSON is YAML
    prometheus = run('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ]);
    const started = performance.now();
    prometheus.child.on('error', (e) => assert.fail(`prometheus: ${e.message} (Debian package prometheus)`));
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

    const api = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/${path}`);
      const body = (await res.json()) as { status: string; data: unknown; error?: string };
      assert.equal(body.status, 'success', `${path}: ${body.error}`);
      return body.data;
    };

    // ready: the TSDB is open (503 before)
    for (;;) {
      assert.equal(prometheus.child.exitCode, null, `prometheus exited: ${prometheus.log()}`);
      assert.ok(performance.now() - started < DEADLINE_MS, `prometheus not ready: ${prometheus.log()}`);
      const ok = await fetch(`http://127.0.0.1:${promPort}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await sleep(100);
    }

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
      assert.equal(prometheus.child.exitCode, null, `prometheus exited: ${prometheus.log()}`);
      alerts = ((await api('alerts')) as { alerts: Alert[] }).alerts;
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
    for (const name of ['SockbufRwndLimitedByPinnedReceiveBuffer', 'SockbufReceiveBufferPinned'])
      assert.match(find(name)?.annotations.summary ?? '', new RegExp(`\\(node, pid ${process.pid}\\)`));
    assert.match(
      find('SockbufUdpReceiveBufferErrors')?.annotations.description ?? '',
      new RegExp(`Sockets dropping: .*127\\.0\\.0\\.1:${udpPort} `),
    );
    process.stderr.write(`# alerts firing ${seconds}s after Prometheus started\n`);

    // every panel query of the dashboard, as Grafana sends it with "All" instances
    const dashboard = JSON.parse(readFileSync(new URL('grafana-sockbuf.json', DOCS), 'utf8'));
    const exprs: string[] = [];
    const walk = (panels: { targets?: { expr?: string }[]; panels?: unknown[] }[]) => {
      for (const p of panels) {
        for (const t of p.targets ?? []) if (t.expr) exprs.push(t.expr);
        walk((p.panels ?? []) as typeof panels);
      }
    };
    walk(dashboard.panels);
    assert.ok(exprs.length >= 20, `${exprs.length} panel queries`);
    const empty: string[] = [];
    for (const expr of exprs) {
      const q = expr.replaceAll('$instance', '.+').replaceAll('$__rate_interval', '10s');
      assert.doesNotMatch(q, /\$/, 'every dashboard variable substituted');
      const data = (await api(`query?query=${encodeURIComponent(q)}`)) as { result: unknown[] };
      if (data.result.length === 0) empty.push(q);
    }
    assert.deepEqual(empty, [], 'every panel query returns data');
    // the dashboard's variable: label_values(sockbuf_sockets, instance)
    const instances = (await api(`label/instance/values?match[]=sockbuf_sockets`)) as string[];
    assert.ok(instances.includes(exporterTarget) && instances.includes(appTarget), instances.join(', '));
  } finally {
    stopping.abort();
    await stop(prometheus);
    await stop(exporter);
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => {});
    await Promise.race([Promise.all(waits), sleep(5000)]);
    rmSync(dir, { recursive: true, force: true });
  }
});
