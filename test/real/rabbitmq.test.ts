// Issue 34, item 4: seed 000's own system. Debian's rabbitmq-server on loopback (its own files, node
// name and ports: scripts/lib/rabbitmq.ts) with tcp_listen_options.recbuf and .sndbuf pinned, driven
// by npm amqplib's publisher (confirms) and consumer (prefetch 64), each its own process, both at
// once: the publisher → broker path meets the broker's pinned receive buffer, the broker → consumer
// path its pinned send buffer (the collapse: ~1 MB/s against tens autotuned). Then:
// - inspect (the library call behind `sockbuf inspect`) flags exactly the broker's two pinned
//   sockets, by process (beam.smp), cause (pinned-rcvbuf to the publisher, pinned-sndbuf to the
//   consumer) and size (32 KiB: the kernel doubles the 16384), and the publisher as rwnd-limited; the
//   reasons and the alerts' descriptions name tcp_listen_options (issue 43: not osiris's setting, and
//   no kernel's ceiling: 32 KiB is below 2 × rmem_max);
// - the exporter (in this process) scraped by the real Prometheus with the shipped rules (`for:` cut
//   to 1 s, test/lib/prometheus.ts) fires, for the broker's listener, the alert over each pinned
//   kind the rules have, naming beam.smp (and the size where the summary reads one);
// - a second broker, autotuned (no tcp_listen_options), under the same load: nothing flagged on its
//   sockets or its clients', no alert and no sockbuf_socket_flagged series for its port.
// Slow, real system: 30–50 s (both brokers and Prometheus start together; 52 s here with eight
// sessions on two CPUs, load 17: the timeout leaves room for that). Skips without rabbitmq-server or
// prometheus. Every broker, epmd, client and Prometheus is stopped by pid in `finally` (and by the
// harness at exit).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/ports.js';
import {
  type AmqpClient,
  type Broker,
  rabbitmqMissing,
  startBroker,
  startClient,
} from '../../scripts/lib/rabbitmq.js';
import { formatSize } from '../../src/policy/units.js';
import { which } from '../../src/sys/process.js';
import { alertRules, type InspectedSocket, startExporter, watchSockets } from '../../src/tools.js';
import { type Alert, type Prometheus, startPrometheus, stop } from '../lib/prometheus.js';

/** The pin (the seed's 16384; the kernel doubles it: skmem rb and tb read 32 KiB). */
const PIN = 16384;
const skip =
  rabbitmqMissing() ?? (which('prometheus') ? false : 'prometheus is missing (Debian package prometheus)');

/**
 * The alerts that must fire for the broker's pinned directions: the rules (as shipped) over the
 * pinned-rcvbuf and pinned-sndbuf flags; `sized` where the summary reads a buffer size series.
 */
function directionAlerts(): { alert: string; sized: boolean }[] {
  const rules = alertRules().flatMap((g) => g.rules);
  const out: { alert: string; sized: boolean }[] = [];
  for (const kind of ['pinned-rcvbuf', 'pinned-sndbuf']) {
    const r = rules.find((x) => x.expr.includes(`kind="${kind}"`));
    if (!r) {
      log(`MISSING: no alert rule over sockbuf_socket_flagged{kind="${kind}"}`);
      continue;
    }
    out.push({ alert: r.alert, sized: /_buffer_bytes/.test(r.annotations.summary) });
  }
  assert.ok(out.length, 'an alert rule over the pinned receive buffer');
  return out;
}

const log = (msg: string) => process.stderr.write(`# ${msg}\n`);

/** A publisher and a consumer on `broker`'s queue, both bounded at 30 s. */
function load(broker: Broker) {
  const o = { url: broker.url, queue: 'seed000', kib: 256, count: 1_000_000, seconds: 30 };
  return { pub: startClient('publish', o), con: startClient('consume', o) };
}

/** `n` inspect samples of `seconds` each (ratios over the interval), TCP only. */
async function samples(n: number, seconds: number): Promise<InspectedSocket[][]> {
  const out: InspectedSocket[][] = [];
  for await (const s of watchSockets({ protocols: ['tcp'] }, seconds, n)) out.push(s.sockets);
  return out;
}

const flagsOf = (rows: InspectedSocket[]) =>
  rows
    .filter((r) => r.flags.length)
    .map((r) => `${r.command} ${r.localPort}→${r.remotePort}: ${JSON.stringify(r.flags)}`);
const kinds = (r: InspectedSocket | undefined) => (r ? r.flags.map((f) => f.kind) : []);
const show = (rows: InspectedSocket[]) =>
  JSON.stringify(
    rows.map((r) => ({
      local: r.localPort,
      remote: r.remotePort,
      command: r.command,
      rb: r.rcvbufBytes,
      tb: r.sndbufBytes,
      rwnd: r.rwndLimitedPct,
      sndbuf: r.sndbufLimitedPct,
      flags: r.flags,
    })),
    null,
    1,
  );

test('real RabbitMQ, both buffers pinned: inspect and the alerts flag its pinned sockets; autotuned: nothing', {
  skip,
  timeout: 90_000,
}, async () => {
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  const dir = mkdtempSync(join(tmpdir(), 'sockbuf-real-rabbitmq-'));
  const brokers: Broker[] = [];
  const clients: AmqpClient[] = [];
  let prometheus: Prometheus | undefined;
  const exporter = await startExporter({ port: 0, hostCounters: false, top: 1000 });
  try {
    // Prometheus first (its first scrape comes ~5 s after start), both brokers meanwhile
    prometheus = startPrometheus(dir, await freePort(), { sockbuf: [new URL(exporter.url).host] });
    const started = await Promise.allSettled([startBroker({ recbuf: PIN, sndbuf: PIN }), startBroker()]);
    for (const s of started) if (s.status === 'fulfilled') brokers.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    const [pinned, autotuned] = brokers;
    assert.match(pinned.config, /^tcp_listen_options\.recbuf = 16384$/m);
    assert.match(pinned.config, /^tcp_listen_options\.nodelay = true$/m);
    assert.doesNotMatch(autotuned.config, /tcp_listen_options/);
    log(
      `brokers ready at ${since()}: pinned pid ${pinned.pid} port ${pinned.port}, autotuned pid ${autotuned.pid} port ${autotuned.port}`,
    );

    // ---- pinned: both directions at once
    const a = load(pinned);
    clients.push(a.pub, a.con);
    const [pub, con] = await Promise.all([a.pub.ready, a.con.ready]);
    await sleep(1000);
    const seen = await samples(2, 1);
    const all = seen.flat();
    const ofBroker = all.filter((r) => r.pid === pinned.pid);
    const toPublisher = ofBroker.filter((r) => r.remotePort === pub.localPort);
    const toConsumer = ofBroker.filter((r) => r.remotePort === con.localPort);
    log(`pinned broker's sockets at ${since()}: ${show(ofBroker.filter((r) => r.state === 'established'))}`);
    assert.ok(
      toPublisher.length && toConsumer.length,
      `the broker's two connections in inspect: ${show(ofBroker)}`,
    );
    for (const r of [...toPublisher, ...toConsumer]) {
      assert.equal(r.command, 'beam.smp');
      assert.equal(r.rcvbufBytes, 2 * PIN, 'the pinned receive buffer (the kernel doubles SO_RCVBUF)');
      assert.equal(r.sndbufBytes, 2 * PIN, 'the pinned send buffer');
    }
    // the publisher → broker path: the broker's receive buffer, with the size, in one of the samples
    const rcv = toPublisher.find((r) => kinds(r).includes('pinned-rcvbuf'));
    assert.ok(rcv, `the broker's socket to the publisher flagged pinned-rcvbuf: ${show(toPublisher)}`);
    const rcvWhy = rcv.flags.find((f) => f.kind === 'pinned-rcvbuf')?.reason ?? '';
    assert.match(rcvWhy, new RegExp(formatSize(2 * PIN)));
    // issue 43: an AMQP listener's connection names tcp_listen_options, never osiris's setting, and
    // 32 KiB is below the kernel's ceiling (2 × rmem_max): no ceiling named
    assert.equal(rcv.role, 'accepted');
    assert.match(rcvWhy, /tcp_listen_options/);
    assert.doesNotMatch(rcvWhy, /replica_|kernel's ceiling/);
    // the publisher's own socket, as before issue 34: rwnd-limited by that peer
    const pubRows = all.filter((r) => r.pid === pub.pid && r.localPort === pub.localPort);
    assert.ok(
      pubRows.some((r) => kinds(r).includes('rwnd-limited')),
      `the publisher rwnd-limited: ${show(pubRows)}`,
    );
    // nothing else of the broker's is flagged: its listener, distribution and epmd sockets
    const others = ofBroker.filter((r) => r.remotePort !== pub.localPort && r.remotePort !== con.localPort);
    assert.deepEqual(flagsOf(others), [], 'no other socket of the broker flagged');
    // the broker → consumer path: its pinned send buffer (the collapse: ~1 MB/s), with the size
    const snd = toConsumer.find((r) => kinds(r).includes('pinned-sndbuf'));
    assert.ok(snd, `the broker's socket to the consumer flagged pinned-sndbuf: ${show(toConsumer)}`);
    assert.match(
      snd.flags.find((f) => f.kind === 'pinned-sndbuf')?.reason ?? '',
      new RegExp(`send buffer ${formatSize(2 * PIN)}`),
    );
    // neither is told it is something else: no stalled reader, no rwnd-limited on the broker's side
    for (const r of [...toPublisher, ...toConsumer])
      assert.deepEqual(
        kinds(r).filter((k) => k !== 'pinned-rcvbuf' && k !== 'pinned-sndbuf'),
        [],
        `only the pins on the broker's sockets: ${show([r])}`,
      );

    // the alerts, from the exporter's series evaluated by Prometheus: one per direction for the
    // broker's listener series, each naming beam.smp (and the size, where the summary gives one)
    await prometheus.ready(45_000);
    const names = directionAlerts();
    const firing = (alerts: Alert[], name: string) =>
      alerts.find(
        (x) =>
          x.labels.alertname === name &&
          x.labels.role === 'listener' &&
          x.labels.port === String(pinned.port) &&
          x.state === 'firing',
      );
    let alerts: Alert[] = [];
    while (performance.now() - t0 < 50_000) {
      alerts = await prometheus.alerts();
      if (names.every((n) => firing(alerts, n.alert))) break;
      await sleep(250);
    }
    const mine = alerts.filter((x) => x.labels.port === String(pinned.port));
    log(
      `alerts for port ${pinned.port} at ${since()}: ${JSON.stringify(mine.map((x) => [x.labels.alertname, x.labels.role, x.state, x.annotations.summary]))}`,
    );
    for (const n of names) {
      const fired = firing(alerts, n.alert);
      assert.ok(
        fired,
        `${n.alert} firing for the broker's listener: ${JSON.stringify(mine.map((x) => x.labels))}`,
      );
      // the pinning program names the sentence: `beam.smp (pid N) pinned the … buffer of … to 32768 bytes`
      assert.match(fired.annotations.summary, new RegExp(`^beam\\.smp \\(pid ${pinned.pid}\\) pinned`));
      if (n.sized) assert.match(fired.annotations.summary, new RegExp(`to ${2 * PIN} bytes`), n.alert);
      assert.match(fired.annotations.description, /tcp_listen_options/, n.alert);
      assert.doesNotMatch(fired.annotations.description, /replica_|kernel's ceiling/, n.alert);
    }
    const rates = await Promise.all([a.pub.stop(), a.con.stop()]);
    log(`pinned: publisher ${rates[0]?.MBps.toFixed(1)} MB/s, consumer ${rates[1]?.MBps.toFixed(1)} MB/s`);
    const stopping = pinned.stop(); // meanwhile

    // ---- autotuned: the same load, nothing flagged
    const b = load(autotuned);
    clients.push(b.pub, b.con);
    const [pub2, con2] = await Promise.all([b.pub.ready, b.con.ready]);
    await sleep(1000);
    const quiet = (await samples(2, 1)).flat();
    const involved = quiet.filter(
      (r) =>
        r.pid === autotuned.pid ||
        (r.localPort === pub2.localPort && r.pid === pub2.pid) ||
        (r.localPort === con2.localPort && r.pid === con2.pid),
    );
    assert.ok(
      involved.some((r) => r.remotePort === pub2.localPort),
      show(involved),
    );
    assert.deepEqual(flagsOf(involved), [], 'nothing flagged when autotuned');
    // Prometheus has scraped the autotuned load for a few seconds: no alert and no flag for its port
    await sleep(3000);
    const port = String(autotuned.port);
    const late = (await prometheus.alerts()).filter((x) => x.labels.port === port);
    assert.deepEqual(late, [], 'no alert for the autotuned broker');
    const flagged = (await prometheus.api(
      `query?query=${encodeURIComponent(`max_over_time(sockbuf_socket_flagged{port="${port}"}[1m])`)}`,
    )) as { result: unknown[] };
    assert.deepEqual(flagged.result, [], 'no sockbuf_socket_flagged series for the autotuned broker');
    const rates2 = await Promise.all([b.pub.stop(), b.con.stop()]);
    await stopping;
    log(
      `autotuned: publisher ${rates2[0]?.MBps.toFixed(1)} MB/s, consumer ${rates2[1]?.MBps.toFixed(1)} MB/s; done at ${since()}`,
    );
  } finally {
    await Promise.all(clients.map((c) => c.stop()));
    await Promise.all(brokers.map((b) => b.stop()));
    await stop(prometheus);
    await exporter.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
