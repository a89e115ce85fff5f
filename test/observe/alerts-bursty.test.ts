// Issue 44 item 5 against the real promtool: the shipped SockbufReceiveBufferPinned and
// SockbufSendBufferPinned rules (their expressions and `for:`, from alertRules()) fire for a socket
// pinned small whose traffic comes in bursts, as the exporter now shows it: the flag held through
// quiet scrapes (flag-memory.ts) and the busy ratio over 1-2 minutes (chrono-window.ts). As it showed
// it before (the flag gone on one scrape in ten, busy 0 on quiet scrapes), neither fires.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AlertRule } from '../../src/observe/alert-rule.js';
import { alertRules, rulesYaml } from '../../src/observe/alerts.js';

const ALERTS = ['SockbufReceiveBufferPinned', 'SockbufSendBufferPinned'];
const H = { instance: 'host1:9477', job: 'sockbuf', protocol: 'tcp' };
const receiver = { ...H, role: 'accepted', address: '127.0.0.1', port: '5672' };
const sender = { ...H, role: 'client', address: '10.0.0.2', port: '5399', pid: '42' };
const series = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',')}}`,
  values,
});
/** 15 minutes of 2 s scrapes: `pattern` repeated (one value a scrape). */
const scrapes = (pattern: string[]) =>
  Array.from({ length: 450 }, (_, i) => pattern[i % pattern.length]).join(' ');

test('promtool: bursty pinned sockets fire both alerts as the exporter shows them now, not as before', {
  skip:
    spawnSync('promtool', ['--version']).status !== 0
      ? 'promtool (Debian package prometheus) is missing'
      : false,
}, () => {
  // the two rules alone, annotations left out (alerts.test.ts checks those): expression and `for:`
  const rules = alertRules().map((g) => ({
    ...g,
    rules: g.rules
      .filter((r) => ALERTS.includes(r.alert))
      .map((r) => ({ ...r, annotations: {} as AlertRule['annotations'] })),
  }));
  const now = [
    series('sockbuf_socket_flagged', { ...receiver, kind: 'pinned-rcvbuf' }, scrapes(['1'])),
    series('sockbuf_socket_flagged', { ...sender, kind: 'pinned-sndbuf' }, scrapes(['1'])),
    // a sender busy ~0.45 s in every 3 s: over 1-2 minutes, 0.15 on every scrape
    series('sockbuf_socket_busy_ratio', sender, scrapes(['0.15'])),
  ];
  const before = [
    // bursts every 3 s, 2 s scrapes: the flag (and the series) gone on quiet scrapes, here one in ten
    // (a series an exporter stops serving is marked stale by Prometheus)
    series(
      'sockbuf_socket_flagged',
      { ...receiver, kind: 'pinned-rcvbuf' },
      scrapes([...Array(9).fill('1'), 'stale']),
    ),
    series(
      'sockbuf_socket_flagged',
      { ...sender, kind: 'pinned-sndbuf' },
      scrapes([...Array(9).fill('1'), 'stale']),
    ),
    // busy over one scrape: 0.22 when a burst fell in it, 0 when none did
    series('sockbuf_socket_busy_ratio', sender, scrapes(['0.22', '0.22', '0'])),
  ];
  const expect = (fires: boolean) =>
    ALERTS.map((alertname) => ({
      eval_time: '14m',
      alertname,
      exp_alerts: fires
        ? [
            {
              exp_labels: {
                ...(alertname === ALERTS[0] ? receiver : sender),
                alertname,
                severity: 'warning',
                ...(alertname === ALERTS[0] ? { kind: 'pinned-rcvbuf' } : {}),
              },
            },
          ]
        : [],
    }));
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-bursty-rules-'));
  try {
    const file = join(dir, 'rules.yml');
    writeFileSync(file, rulesYaml(rules));
    const run = (input: ReturnType<typeof series>[], fires: boolean) => {
      const t = join(dir, 'test.yml');
      writeFileSync(
        t,
        JSON.stringify({
          rule_files: [file],
          evaluation_interval: '2s',
          tests: [{ interval: '2s', input_series: input, alert_rule_test: expect(fires) }],
        }),
      );
      const r = spawnSync('promtool', ['test', 'rules', t], { encoding: 'utf8', timeout: 120_000 });
      return { code: r.status, out: `${r.stdout}${r.stderr}` };
    };
    const fired = run(now, true);
    assert.equal(fired.code, 0, fired.out);
    const quiet = run(before, false);
    assert.equal(quiet.code, 0, quiet.out);
    // and the check can fail: before's series do not fire
    assert.notEqual(run(before, true).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
