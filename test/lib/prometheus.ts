// The real Prometheus (Debian's `prometheus` binary) for the tests that evaluate the shipped alert
// rules against a real exporter: on loopback, storage in the caller's temp dir, 1 s scrape and
// evaluation intervals, the rules `sockbuf exporter --print-rules` prints (rulesYaml(), what the
// shipped rules file holds) with every `for:` cut to 1 s (the shipped minutes would make a test of
// minutes; the expressions are the shipped ones, unchanged). For test/fleet/prometheus.test.ts and
// test/real/rabbitmq.test.ts.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { rulesYaml } from '../../src/tools.js';

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

export interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
  log(): string;
}

/** A child whose output is kept for the failure message; resolves its exit. */
export function run(cmd: string, args: string[]): Running {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d) => (log = (log + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (log = (log + d).slice(-20_000)));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, exited, log: () => log };
}

/** SIGTERM, SIGKILL after 5 s; resolves when it exited. */
export async function stop(p: { child: ChildProcess; exited: Promise<number | null> } | undefined) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(t);
}

/** The shipped rules with every `for:` cut to 1s, and how many `for:` they had. */
export function rulesWithShortFor(): { text: string; fors: number } {
  const shipped = rulesYaml();
  const fors = shipped.match(/^ {8}for: "\d+m"$/gm) ?? [];
  return { text: shipped.replace(/^( {8}for: )"\d+m"$/gm, '$1"1s"'), fors: fors.length };
}

export interface Prometheus extends Running {
  port: number;
  /** GET /api/v1/PATH: its data, asserting status success. */
  api(path: string): Promise<unknown>;
  /** Waits until /-/ready answers (the TSDB is open); fails past `deadlineMs` since start. */
  ready(deadlineMs: number): Promise<void>;
  alerts(): Promise<Alert[]>;
  /** Started at (performance.now()). */
  started: number;
}

/**
 * Starts prometheus on 127.0.0.1:`port` scraping `jobs` every second with the shipped rules (`for:`
 * cut): job name → its targets, or → the rest of its scrape config (scheme, tls_config, basic_auth,
 * static_configs …). It scrapes nothing before its target discovery's first update, about 5 s after
 * start (fixed in Prometheus 2.42): start it first.
 */
export function startPrometheus(
  dir: string,
  port: number,
  jobs: Record<string, string[] | Record<string, unknown>>,
): Prometheus {
  writeFileSync(join(dir, 'rules.yml'), rulesWithShortFor().text);
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: [join(dir, 'rules.yml')],
    scrape_configs: Object.entries(jobs).map(([job_name, job]) =>
      Array.isArray(job) ? { job_name, static_configs: [{ targets: job }] } : { job_name, ...job },
    ),
  };
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config)); // JSON is YAML
  const p = run('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ]);
  const started = performance.now();
  p.child.on('error', (e) => assert.fail(`prometheus: ${e.message} (Debian package prometheus)`));
  const api = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`);
    const body = (await res.json()) as { status: string; data: unknown; error?: string };
    assert.equal(body.status, 'success', `${path}: ${body.error}`);
    return body.data;
  };
  return {
    ...p,
    port,
    started,
    api,
    async ready(deadlineMs: number) {
      for (;;) {
        assert.equal(p.child.exitCode, null, `prometheus exited: ${p.log()}`);
        assert.ok(performance.now() - started < deadlineMs, `prometheus not ready: ${p.log()}`);
        const ok = await fetch(`http://127.0.0.1:${port}/-/ready`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return;
        await sleep(100);
      }
    },
    async alerts() {
      assert.equal(p.child.exitCode, null, `prometheus exited: ${p.log()}`);
      return ((await api('alerts')) as { alerts: Alert[] }).alerts;
    },
  };
}
