// Errors with context (issue 44, item 6): /probe's 400 body and the exporter's log never echo a
// control character from the query, and a probe whose client left is logged with the client's
// address, not "from undefined". Real HTTP on loopback; about 2 s.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { startExporter } from '../../src/observe/exporter-server.js';
import { probeHandler } from '../../src/serve/probe-http.js';

// ESC, BEL, CSI and DEL: none may reach a body or a log line raw
// biome-ignore lint/suspicious/noControlCharactersInRegex: what the test looks for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

test('/probe: a query with escape sequences is refused (400) with them escaped, in the body and the log', async () => {
  const lines: string[] = [];
  const exp = await startExporter({
    port: 0,
    hostCounters: false,
    probe: probeHandler({ allow: '127.0.0.1', log: (l) => lines.push(l) }),
  });
  try {
    const url = exp.url.replace('/metrics', '/probe?target=127.0.0.1:1&module=%1b%5b31mftp%07%c2%9b');
    const r = await fetch(url);
    assert.equal(r.status, 400);
    const body = await r.text();
    assert.doesNotMatch(body, CONTROL, JSON.stringify(body));
    assert.match(body, /module must be one of iperf3, sockbuf/);
    const logged = lines.find((l) => l.includes('probe refused (400)'));
    assert.ok(logged, lines.join('\n'));
    assert.doesNotMatch(logged, CONTROL, JSON.stringify(logged));
    assert.match(logged, /from 127\.0\.0\.1:\d+: /);
  } finally {
    await exp.close();
  }
});

test('/probe: a client that leaves mid-probe is logged by its address, not "from undefined"', async () => {
  // a target that accepts and never answers: the probe runs until its client goes
  const silent = net.createServer((s) => {
    s.resume();
    s.on('error', () => {});
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  const lines: string[] = [];
  const exp = await startExporter({
    port: 0,
    hostCounters: false,
    probe: probeHandler({ allow: '127.0.0.1', maxDuration: '3s', log: (l) => lines.push(l) }),
  });
  try {
    const url = new URL(exp.url.replace('/metrics', `/probe?target=127.0.0.1:${port}&module=iperf3`));
    const req = http.get(url);
    req.on('error', () => {});
    await new Promise((r) => setTimeout(r, 500));
    req.destroy();
    for (
      const end = Date.now() + 5000;
      !lines.some((l) => l.startsWith('probe iperf3')) && Date.now() < end;
    )
      await new Promise((r) => setTimeout(r, 20));
    const logged = lines.find((l) => l.startsWith('probe iperf3')) ?? '';
    assert.match(logged, /from 127\.0\.0\.1:\d+: /, lines.join('\n'));
    assert.doesNotMatch(logged, /undefined/);
  } finally {
    await exp.close();
    silent.close();
  }
});
