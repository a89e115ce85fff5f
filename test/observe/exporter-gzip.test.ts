// /metrics honours Accept-Encoding: gzip, as node_exporter and exporter-toolkit do: the body is
// gzip-compressed (Content-Encoding: gzip, Vary: Accept-Encoding) when asked and plain otherwise, and
// `curl --compressed` gets gzip and decodes it to the same exposition text.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import http from 'node:http';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, startExporter } from '../../src/observe/exporter-server.js';

test('acceptsGzip follows the q-values of Accept-Encoding', () => {
  for (const yes of [
    'gzip',
    'gzip, deflate, br',
    'br;q=1.0, gzip;q=0.8',
    'x-gzip',
    '*',
    'identity, *;q=0.5',
    'GZIP',
  ])
    assert.equal(acceptsGzip(yes), true, yes);
  for (const no of [
    undefined,
    '',
    'identity',
    'br, deflate',
    'gzip;q=0',
    'gzip;q=0, *',
    '*;q=0',
    'gzip; q=0.000',
  ])
    assert.equal(acceptsGzip(no), false, String(no));
});

/** GET url with these headers: status, headers and the raw body bytes (no decoding). */
function get(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      http
        .get(url, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
        })
        .on('error', reject);
    },
  );
}

test('GET /metrics with Accept-Encoding: gzip is gzip; without, plain text; curl --compressed gets gzip', {
  timeout: 30_000,
}, async () => {
  const exp = await startExporter({ port: 0, hostCounters: false });
  try {
    const zipped = await get(exp.url, { 'accept-encoding': 'gzip, deflate' });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'accept-encoding');
    assert.deepEqual([...zipped.body.subarray(0, 2)], [0x1f, 0x8b], 'the gzip magic');
    const text = gunzipSync(zipped.body).toString();
    assert.match(text, /^# HELP sockbuf_build_info /m);

    const plain = await get(exp.url, {});
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.body.toString(), /^# HELP sockbuf_build_info /m);
    const refused = await get(exp.url, { 'accept-encoding': 'gzip;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined);

    if (spawnSync('curl', ['--version']).status === 0) {
      // async: the exporter serves from this process's event loop
      const r = await promisify(execFile)('curl', ['-sS', '--compressed', '-D', '-', exp.url], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.match(r.stdout, /^content-encoding: gzip\r?$/im, 'curl --compressed asked for gzip and got it');
      assert.match(r.stdout, /^# HELP sockbuf_build_info /m, 'and decoded it');
    }
  } finally {
    await exp.close();
  }
});
