// docs/fleet.md's /probe scrape config, as written, run by the real Prometheus (Debian's binary, loopback,
// storage in a temp dir): its relabelling turns each target into ?target= and sends the scrape to the
// exporter. A real `iperf3 -s` in the allow-list gives sockbuf_probe_success 1 with the target as the
// instance; a target outside the list is refused (403), which Prometheus records as up 0. Everything
// started here (prometheus and iperf3 by pid, the exporter, the temp dir) is removed in `finally`.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { freePort } from '../../scripts/lib/ports.js';
import { startExporter } from '../../src/observe/exporter-server.js';
import { probeHandler } from '../../src/serve/probe-http.js';

const missing = ['prometheus', 'iperf3'].find((c) => spawnSync(c, ['--version']).status !== 0);
const SKIP = missing ? `${missing} is not installed (.ci/run installs it)` : false;

/** docs/fleet.md's scrape job for /probe (the yaml block that sets metrics_path: /probe). */
function pageProbeJob(): Record<string, unknown> {
  const page = readFileSync(new URL('../../docs/fleet.md', import.meta.url), 'utf8');
  const block = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .find((b) => b.includes('metrics_path: /probe'));
  assert.ok(block, 'docs/fleet.md has a /probe scrape config');
  return (parse(block) as { scrape_configs: Record<string, unknown>[] }).scrape_configs[0];
}

test('the /probe scrape config of docs/fleet.md in a real Prometheus: success 1 for an allowed iperf3 -s, up 0 for a refused target', {
  skip: SKIP,
  timeout: 90_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-probe-prometheus-'));
  const kids: ChildProcess[] = [];
  const exp = await startExporter({
    port: 0,
    hostCounters: false,
    probe: probeHandler({ allow: '127.0.0.1', duration: '1s' }),
  });
  try {
    const iperf3Port = await freePort();
    kids.push(spawn('iperf3', ['-s', '-B', '127.0.0.1', '-p', String(iperf3Port)], { stdio: 'ignore' }));
    const job = pageProbeJob();
    const relabel = job.relabel_configs as Record<string, unknown>[];
    // as written, but sooner, and with this test's targets and exporter
    Object.assign(job, {
      scrape_interval: '2s',
      scrape_timeout: '2s',
      static_configs: [{ targets: [`127.0.0.1:${iperf3Port}`, '192.0.2.1:5201'] }],
    });
    const last = relabel.at(-1) as { replacement: string };
    assert.equal(last.replacement, '127.0.0.1:9477', 'docs/fleet.md sends every scrape to the exporter');
    last.replacement = new URL(exp.url).host;
    const config = join(dir, 'prometheus.yml');
    writeFileSync(config, stringify({ scrape_configs: [job] }));
    const promPort = await freePort();
    const prom = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { stdio: 'ignore' },
    );
    kids.push(prom);
    const query = async (q: string) => {
      const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`).catch(
        () => undefined,
      );
      const body = (await r?.json().catch(() => undefined)) as
        | { data?: { result: { metric: Record<string, string>; value: [number, string] }[] } }
        | undefined;
      return body?.data?.result ?? [];
    };
    const end = Date.now() + 60_000;
    let ok: { metric: Record<string, string>; value: [number, string] }[] = [];
    let refused: typeof ok = [];
    while (Date.now() < end && (ok.length === 0 || refused.length === 0)) {
      await new Promise((r) => setTimeout(r, 500));
      ok = await query(`sockbuf_probe_success{instance="127.0.0.1:${iperf3Port}"} == 1`);
      refused = await query('up{instance="192.0.2.1:5201"} == 0');
    }
    assert.equal(ok.length, 1, 'sockbuf_probe_success 1 for the iperf3 target');
    assert.equal(ok[0].metric.job, 'sockbuf-probe');
    assert.equal(refused.length, 1, 'the target outside the allow-list is a failed scrape (403)');
    const rate = await query(`sockbuf_probe_throughput_bytes_per_second{instance="127.0.0.1:${iperf3Port}"}`);
    assert.ok(Number(rate[0]?.value[1]) > 1e7, JSON.stringify(rate));
  } finally {
    for (const k of kids)
      if (k.pid && k.exitCode === null && k.signalCode === null) process.kill(k.pid, 'SIGKILL');
    await Promise.all(
      kids.map((k) =>
        k.exitCode === null && k.signalCode === null ? new Promise((r) => k.once('close', r)) : undefined,
      ),
    );
    await exp.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
