// The exporter over real HTTP on loopback, its text parsed back.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError } from '../../src/errors.js';
import type { InspectedSocket } from '../../src/observe/analyze.js';
import { chooseSockets, groupSeries } from '../../src/observe/exporter.js';
import { startExporter } from '../../src/observe/exporter-server.js';
import { SO_RCVBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import { bindFd, createSocket, listenFd, listenOnFd, setIntOption } from '../../src/sys/socket.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (0.0.4): # HELP / # TYPE lines, then `name{l="v",…} value`. */
function parseText(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) {
      types.set(t[1], t[2]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { samples, types };
}

test('GET /metrics: node_netstat host counters, sockbuf socket counts, and a UDP socket with drops', async () => {
  // other programs on a shared host may have more flagged sockets than ours: no top limit here
  const exp = await startExporter({ port: 0, top: 10_000 });
  const narrow = await startExporter({ port: 0, top: 1 });
  const rx = dgram.createSocket({ type: 'udp4', recvBufferSize: 4096 });
  const tx = dgram.createSocket('udp4');
  try {
    assert.match(exp.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    rx.on('message', () => {});
    await new Promise<void>((r) => rx.bind(0, '127.0.0.1', r));
    // @ts-expect-error: Node internal, stops reading so the kernel queue fills and drops
    rx._handle.recvStop();
    const port = rx.address().port;
    for (let i = 0; i < 60; i++) await new Promise((r) => tx.send(Buffer.alloc(1000), port, '127.0.0.1', r));

    const res = await fetch(exp.url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const { samples, types } = parseText(await res.text());
    const one = (name: string) => samples.find((s) => s.name === name);
    for (const name of [
      'node_netstat_Udp_RcvbufErrors',
      'node_netstat_Udp_InErrors',
      'node_netstat_TcpExt_TCPRcvQDrop',
    ]) {
      assert.ok(one(name), `${name} exported`);
      assert.ok(Number.isFinite(one(name)?.value));
    }
    assert.ok((one('node_netstat_Udp_RcvbufErrors')?.value ?? 0) > 0, 'our drops count in RcvbufErrors');
    assert.ok(
      (samples.find((s) => s.name === 'sockbuf_sockets' && s.labels.protocol === 'udp')?.value ?? 0) >= 1,
    );
    const drops = samples.find(
      (s) => s.name === 'sockbuf_socket_drops_total' && s.labels.port === String(port),
    );
    assert.ok(drops, 'the dropping socket has per-socket series');
    assert.ok(drops.value > 0);
    assert.deepEqual(drops.labels, {
      protocol: 'udp',
      role: 'listener',
      address: '127.0.0.1',
      port: String(port),
    });
    assert.equal(types.get('sockbuf_socket_drops_total'), 'counter');
    const flagged = samples.find(
      (s) =>
        s.name === 'sockbuf_socket_flagged' &&
        s.labels.port === String(port) &&
        s.labels.kind === 'udp-drops',
    );
    assert.equal(flagged?.value, 1);
    const owner = samples.find(
      (s) => s.name === 'sockbuf_socket_owner_info' && s.labels.port === String(port),
    );
    assert.deepEqual(owner?.labels, { ...drops.labels, command: 'node', pid: String(process.pid) });
    // cardinality stays bounded by --top
    const few = parseText(await (await fetch(narrow.url)).text()).samples;
    const perSocket = new Set(
      few
        .filter((s) => s.name === 'sockbuf_socket_receive_buffer_bytes')
        .map((s) => JSON.stringify(s.labels)),
    );
    assert.equal(perSocket.size, 1, 'one socket with drops or limits at least (ours): exactly one series');

    assert.equal((await fetch(exp.url.replace('/metrics', '/nope'))).status, 404);
    assert.equal((await fetch(exp.url, { method: 'POST' })).status, 405);
  } finally {
    rx.close();
    tx.close();
    await exp.close();
    await narrow.close();
  }
});

test('a TCP listener whose accept queue overflows gets series: its drops and its process; a listener whose established connection drops is not counted as listen drops', {
  timeout: 15_000,
}, async () => {
  // another listener: SO_RCVBUF 4096 pinned, its one connection never read, the client writing, so
  // that the established socket drops packets (skmem d) while its accept queue never overflows
  const other = net.createServer({ pauseOnConnect: true }, (c) => c.on('error', () => {}));
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, 4096);
  bindFd(lfd, { host: '127.0.0.1', port: 0 });
  listenFd(lfd);
  await listenOnFd(other, lfd);
  const otherPort = String((other.address() as net.AddressInfo).port);
  const writer = net.connect(Number(otherPort), '127.0.0.1').on('error', () => {});
  const blob = Buffer.alloc(1 << 20);
  writer.write(blob);
  writer.write(blob);
  // a listener with a backlog of 1 that never accepts, in another process (Node accepts at once)
  const py = spawn('python3', [
    '-c',
    'import socket,sys\nl=socket.socket()\nl.bind(("127.0.0.1",0))\nl.listen(1)\n' +
      'print(l.getsockname()[1],flush=True)\nsys.stdin.read()',
  ]);
  const exp = await startExporter({ port: 0, top: 10_000, hostCounters: false });
  const clients: net.Socket[] = [];
  try {
    const [line] = (await once(py.stdout, 'data')) as [Buffer];
    const port = line.toString().trim();
    const series = async () => parseText(await (await fetch(exp.url)).text()).samples;
    await series(); // the first sample: drops since open do not choose a listener
    for (let i = 0; i < 6; i++) clients.push(net.connect(Number(port), '127.0.0.1').on('error', () => {}));
    let drops: Sample | undefined;
    let samples: Sample[] = [];
    for (let i = 0; i < 20 && !drops; i++) {
      await sleep(300); // SYNs beyond the queue are dropped and retried: the first drops come at once
      samples = await series();
      drops = samples.find(
        (s) =>
          s.name === 'sockbuf_socket_listen_drops_total' &&
          s.labels.port === port &&
          s.labels.role === 'listener',
      );
    }
    assert.ok(drops, 'the overflowing listener is chosen');
    assert.ok(drops.value > 0, JSON.stringify(samples.filter((s) => s.labels.port === port)));
    // no finding on the connecting side: a socket in its handshake is not a stalled reader
    assert.deepEqual(
      samples.filter((s) => s.name === 'sockbuf_socket_flagged' && s.labels.port === port),
      [],
    );
    assert.deepEqual(drops.labels, { protocol: 'tcp', role: 'listener', address: '127.0.0.1', port });
    const owner = samples.find(
      (s) => s.name === 'sockbuf_socket_owner_info' && s.labels.port === port && s.labels.role === 'listener',
    );
    assert.deepEqual(owner?.labels, { ...drops.labels, command: 'python3', pid: String(py.pid) });
    // the other listener: its connection's drops in drops_total, none in listen_drops_total
    const mine = (name: string) =>
      samples.find((s) => s.name === name && s.labels.port === otherPort && s.labels.role === 'listener');
    assert.ok(
      (mine('sockbuf_socket_drops_total')?.value ?? 0) > 0,
      JSON.stringify(samples.filter((s) => s.labels.port === otherPort)),
    );
    assert.equal(mine('sockbuf_socket_listen_drops_total')?.value, 0);
  } finally {
    writer.destroy();
    other.close();
    for (const c of clients) c.destroy();
    py.kill();
    await exp.close();
  }
});

test('promtool check metrics accepts a scrape with per-socket series; with host counters, only the names node_exporter uses are linted', async () => {
  // a UDP socket that drops, so that sockbuf_socket_* and sockbuf_socket_owner_info have samples
  const full = await startExporter({ port: 0, top: 10_000, own: true });
  const ours = await startExporter({ port: 0, top: 10_000, own: true, hostCounters: false });
  const rx = dgram.createSocket({ type: 'udp4', recvBufferSize: 4096 });
  const tx = dgram.createSocket('udp4');
  try {
    rx.on('message', () => {});
    await new Promise<void>((r) => rx.bind(0, '127.0.0.1', r));
    // @ts-expect-error: Node internal, stops reading so the kernel queue fills and drops
    rx._handle.recvStop();
    const port = rx.address().port;
    for (let i = 0; i < 60; i++) await new Promise((r) => tx.send(Buffer.alloc(1000), port, '127.0.0.1', r));
    const check = async (url: string) => {
      const text = await (await fetch(url)).text();
      const r = spawnSync('promtool', ['check', 'metrics'], {
        input: text,
        encoding: 'utf8',
        timeout: 30_000,
      });
      if (r.error)
        throw new Error(`promtool: ${r.error.message} (Debian package prometheus; .ci/run installs it)`);
      return { text, code: r.status, problems: `${r.stdout}${r.stderr}`.split('\n').filter(Boolean) };
    };
    const own = await check(ours.url);
    assert.match(own.text, new RegExp(`^sockbuf_socket_owner_info\\{.*port="${port}".*\\} 1$`, 'm'));
    assert.equal(own.code, 0, own.problems.join('\n'));
    assert.deepEqual(own.problems, []);
    // node_exporter's own names (node_netstat_Udp_RcvbufErrors …) are CamelCase, and promtool lints
    // them in node_exporter's output too: they are kept so that existing dashboards and alerts work
    const all = await check(full.url);
    assert.equal(all.code, 3, 'lint problems only (1 would be a parse error)');
    assert.ok(all.problems.length > 0);
    for (const p of all.problems)
      assert.match(
        p,
        /^node_netstat_[A-Za-z0-9]+_[A-Za-z0-9]+ metric names should be written in 'snake_case' not 'camelCase'$/,
      );
  } finally {
    rx.close();
    tx.close();
    await full.close();
    await ours.close();
  }
});

test('a port in use is an EnvironmentError (exit 3) that names the address', async () => {
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  try {
    const port = (taken.address() as net.AddressInfo).port;
    await assert.rejects(startExporter({ port }), (e: unknown) => {
      assert.ok(e instanceof EnvironmentError);
      assert.equal(e.code, 'EADDRINUSE');
      assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      return true;
    });
  } finally {
    taken.close();
  }
});

test('chooseSockets: flagged first, then the most limited, never more than top', () => {
  const row = (port: number, limited: boolean, pct: number): InspectedSocket =>
    ({
      protocol: 'tcp',
      localPort: port,
      limited,
      rwndLimitedPct: pct,
      sndbufLimitedPct: 0,
      flags: [],
    }) as unknown as InspectedSocket;
  const rows = [row(1, false, 40), row(2, true, 10), row(3, false, 0), row(4, false, 90), row(5, true, 99)];
  assert.deepEqual(
    chooseSockets(rows, 3).map((r) => r.localPort),
    [5, 2, 4],
  );
  assert.deepEqual(
    chooseSockets(rows, 10).map((r) => r.localPort),
    [5, 2, 4, 1],
    'an idle socket gets no series',
  );
  assert.equal(chooseSockets(rows, 0).length, 0);
});

test('the dashboards parse; the fleet one asks only for what the exporter exports, the application one for registerMetrics', async () => {
  const { readFileSync } = await import('node:fs');
  const { Registry } = await import('prom-client');
  const { registerMetrics } = await import('../../src/observe/metrics.js');
  const { registerSocketMetrics } = await import('../../src/observe/exporter.js');
  const { registerHostMetrics } = await import('../../src/observe/host-metrics.js');
  const { registerBuildInfo, registerScrapeMetrics, Collectors } = await import(
    '../../src/observe/self-metrics.js'
  );
  const read = (f: string) => readFileSync(new URL(`../../docs/deploy/${f}`, import.meta.url), 'utf8');
  const names = (text: string) =>
    text.match(/\b(node_netstat|node_softnet|node_sockstat|sockbuf|process)_\w+/g) ?? [];
  const exporter = new Registry();
  registerBuildInfo(exporter);
  registerSocketMetrics(exporter);
  registerHostMetrics(exporter);
  registerScrapeMetrics(exporter, new Collectors(), () => 0);
  const app = new Registry();
  registerMetrics(app);
  for (const [file, registry] of [
    ['grafana-sockbuf-fleet.json', exporter],
    ['grafana-sockbuf-app.json', app],
  ] as const) {
    const text = read(file);
    const dash = JSON.parse(text);
    assert.match(dash.description, /^Needs /, `${file} says what it needs`);
    const known = new Set(registry.getMetricsAsArray().map((m) => m.name));
    const exprs = (dash.panels as { targets?: { expr: string }[] }[]).flatMap((p) =>
      (p.targets ?? []).map((t) => t.expr),
    );
    const used = names(exprs.join('\n'));
    assert.ok(used.length > 5, file);
    for (const name of used) assert.ok(known.has(name), `${file}: ${name} is not exported there`);
  }
  // per-socket panels label by role, address and port (the labels sockbuf_socket_* carry)
  const fleet = read('grafana-sockbuf-fleet.json');
  assert.doesNotMatch(fleet, /local_port|remote_port/);
  assert.match(fleet, /\{\{role\}\} \{\{address\}\}:\{\{port\}\}/);
});

test('groupSeries: a listener series gathers all its connections (the busiest one counts); client series keep their pid', () => {
  const base = {
    protocol: 'tcp' as const,
    family: 4 as const,
    role: 'client' as const,
    localAddress: '127.0.0.1',
    remoteAddress: '127.0.0.1',
    inode: 0,
    cookie: '',
    limited: false,
    flags: [],
  };
  const rows: InspectedSocket[] = [
    { ...base, state: 'listen', localPort: 5672, remotePort: 0, remoteAddress: '0.0.0.0' },
    // the broker's socket to the publisher: flagged, so the listener series is chosen
    {
      ...base,
      state: 'established',
      localPort: 5672,
      remotePort: 40001,
      busyRatio: 0.15,
      limited: true,
      flags: [{ kind: 'pinned-rcvbuf', reason: '' }],
    },
    // the broker's socket to the consumer: busy 95 %, not chosen by itself (top 2)
    { ...base, state: 'established', localPort: 5672, remotePort: 40002, busyRatio: 0.95 },
    // the publisher and the consumer, two processes connecting to the broker
    {
      ...base,
      state: 'established',
      localPort: 40001,
      remotePort: 5672,
      pid: 11,
      limited: true,
      flags: [{ kind: 'rwnd-limited', reason: '' }],
    },
    {
      ...base,
      state: 'established',
      localPort: 40002,
      remotePort: 5672,
      pid: 12,
      limited: true,
      flags: [{ kind: 'stalled-reader', reason: '' }],
    },
  ];
  const groups = groupSeries(rows, 3);
  const listener = groups.find((g) => g.labels.role === 'listener');
  assert.equal(listener?.rows.length, 3, 'the listen socket and both connections');
  assert.equal(Math.max(...(listener?.rows.map((r) => r.busyRatio ?? 0) ?? [])), 0.95);
  const clients = groups.filter((g) => g.labels.role === 'client').map((g) => g.labels);
  assert.deepEqual(clients, [
    { protocol: 'tcp', role: 'client', address: '127.0.0.1', port: '5672', pid: '11' },
    { protocol: 'tcp', role: 'client', address: '127.0.0.1', port: '5672', pid: '12' },
  ]);
});
