// exporter-toolkit's web configuration (--web.config.file): the file's checks, then a real exporter
// over TLS with a client certificate and basic authentication, asked by curl (a TLS client sockbuf did
// not write) and by Node. Certificates are made here with openssl; everything goes to a temp dir.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import bcrypt from 'bcryptjs';
import { startExporter } from '../../src/observe/exporter-server.js';
import { basicAuth, parseWebConfig } from '../../src/observe/web-config.js';

const dir = mkdtempSync(join(tmpdir(), 'sockbuf-webcfg-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate for 127.0.0.1, its key, in dir/NAME.{crt,key}. */
function selfSigned(name: string): void {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`),
    '-subj', `/CN=${name}`, '-addext', `subjectAltName=IP:127.0.0.1,DNS:${name}`,
  ], { stdio: 'ignore' }); // biome-ignore format: one argument list
}

const parse = (text: string) => parseWebConfig(text, join(dir, 'web.yml'));
const refused = (text: string, why: RegExp) => assert.throws(() => parse(text), why);

test('the file: unknown fields, half a certificate, a CA without a policy and what sockbuf lacks are refused', () => {
  selfSigned('server');
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  certfile: x\n',
    /field tls_server_config\.certfile is not a known field/,
  );
  refused('basic_auth: {}\n', /field basic_auth is not a known field/);
  refused('tls_server_config:\n  cert_file: server.crt\n', /missing key_file/);
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: nope.key\n',
    /key_file nope\.key: ENOENT/,
  );
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: server.crt\n',
    /client CA's have been configured without a client_auth_type/,
  );
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: Maybe\n',
    /client_auth_type Maybe is none of/,
  );
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS14\n',
    /min_version TLS14/,
  );
  refused(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n',
    /cipher_suites is not supported/,
  );
  refused('basic_auth_users:\n  alice: secret\n', /basic_auth_users\.alice is not a bcrypt hash/);
  refused('http_server_config:\n  headers:\n    X-Frame-Options: allow\n', /deny or sameorigin/);
  refused('rate_limit:\n  interval: 1s\n  burst: 5\n', /rate_limit is not supported/);
  refused('[1, 2]\n', /the file must be a mapping/);
  // what is accepted: an empty file is plain HTTP; paths are relative to the file's folder
  assert.equal(parse('').tls, undefined);
  const ok = parse(
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13\n  curve_preferences: [X25519, CurveP256]\n' +
      'http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n',
  );
  assert.equal(ok.tls?.minVersion, 'TLSv1.3');
  assert.equal(ok.tls?.ecdhCurve, 'X25519:P-256');
  assert.equal(ok.tls?.cert, readFileSync(join(dir, 'server.crt'), 'utf8'));
  assert.deepEqual(ok.headers, { 'X-Content-Type-Options': 'nosniff' });
});

test("basic auth: htpasswd's $2y$ hashes, a wrong password or user refused, a checked password cached", async () => {
  const hash = bcrypt.hashSync('s3cret', 4).replace(/^\$2b\$/, '$2y$'); // htpasswd -B writes $2y$
  const check = basicAuth(new Map([['prometheus', hash]]));
  const header = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  assert.equal(await check(header('prometheus', 's3cret')), true);
  assert.equal(await check(header('prometheus', 'wrong')), false);
  assert.equal(await check(header('grafana', 's3cret')), false);
  assert.equal(await check(undefined), false);
  assert.equal(await check('Bearer x'), false);
  const t = performance.now();
  for (let i = 0; i < 50; i++) await check(header('prometheus', 's3cret'));
  assert.ok(performance.now() - t < 500, 'cached: 50 checks without 50 bcrypt runs');
});

test('a real exporter over TLS with basic auth and a client certificate: curl and Node in, the rest refused', {
  timeout: 60_000,
}, async (t) => {
  if (spawnSync('curl', ['--version']).error) return t.skip('curl is not installed (Debian package curl)');
  selfSigned('server');
  selfSigned('client');
  selfSigned('stranger');
  const hash = bcrypt.hashSync('s3cret', 10);
  writeFileSync(
    join(dir, 'web.yml'),
    'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n' +
      '  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client.crt\n' +
      `basic_auth_users:\n  prometheus: ${hash}\n` +
      'http_server_config:\n  headers:\n    X-Frame-Options: deny\n',
  );
  const exp = await startExporter({ port: 0, top: 0, webConfigFile: join(dir, 'web.yml') });
  try {
    assert.match(exp.url, /^https:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // curl runs beside the server, which is in this process: asynchronously
    const curl = (...args: string[]) =>
      new Promise<{ status: number; stdout: string }>((resolve) => {
        const a = [
          '-sS',
          '--max-time',
          '10',
          '--cacert',
          join(dir, 'server.crt'),
          '-D',
          '-',
          ...args,
          exp.url,
        ];
        execFile('curl', a, { encoding: 'utf8' }, (err, stdout) =>
          resolve({ status: err ? Number(err.code ?? 1) : 0, stdout }),
        );
      });
    const cert = (name: string) => ['--cert', join(dir, `${name}.crt`), '--key', join(dir, `${name}.key`)];
    const ok = await curl(...cert('client'), '-u', 'prometheus:s3cret');
    assert.match(ok.stdout, /^HTTP\/1\.1 200/);
    assert.match(ok.stdout, /^x-frame-options: deny/im);
    assert.match(ok.stdout, /^sockbuf_build_info\{version="[^"]+",nodeversion="v\d+/m);
    assert.match(ok.stdout, /^process_resident_memory_bytes \d+/m);
    assert.match(ok.stdout, /^sockbuf_scrape_collector_success\{collector="sockets"\} 1$/m);
    const wrong = await curl(...cert('client'), '-u', 'prometheus:nope');
    assert.match(wrong.stdout, /^HTTP\/1\.1 401/);
    assert.match(wrong.stdout, /^www-authenticate: Basic/im);
    assert.doesNotMatch(wrong.stdout, /sockbuf_/);
    // no client certificate, or one the CA did not sign: the handshake fails
    assert.notEqual((await curl('-u', 'prometheus:s3cret')).status, 0);
    const stranger = await curl(...cert('stranger'), '-u', 'prometheus:s3cret');
    assert.notEqual(stranger.status, 0);
    assert.doesNotMatch(stranger.stdout, /sockbuf_/);
    // plain HTTP to the TLS port gets no metrics
    const plain = await fetch(exp.url.replace('https:', 'http:')).then(
      (r) => r.text(),
      (e: Error) => e.message,
    );
    assert.doesNotMatch(plain, /sockbuf_/);
  } finally {
    await exp.close();
  }
});

test('a changed file is picked up without a restart (a new password, a new certificate); a broken one leaves the last in force', {
  timeout: 60_000,
}, async () => {
  selfSigned('old');
  selfSigned('new');
  const file = join(dir, 'reload.yml');
  const config = (cert: string, password: string) =>
    `tls_server_config:\n  cert_file: ${cert}.crt\n  key_file: ${cert}.key\n` +
    `basic_auth_users:\n  prometheus: ${bcrypt.hashSync(password, 4)}\n`;
  writeFileSync(file, config('old', 'first'));
  const lines: string[] = [];
  const exp = await startExporter({
    port: 0,
    top: 0,
    hostCounters: false,
    webConfigFile: file,
    log: (l) => lines.push(l),
  });
  const curl = (ca: string, password: string) =>
    new Promise<string>((resolve) =>
      execFile(
        'curl',
        [
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '--max-time',
          '10',
          '--cacert',
          join(dir, `${ca}.crt`),
          '-u',
          `prometheus:${password}`,
          exp.url,
        ],
        { encoding: 'utf8' },
        (err, stdout) => resolve(err ? `failed ${stdout}` : stdout),
      ),
    );
  const later = () => new Promise((r) => setTimeout(r, 1100)); // the file is looked at once a second
  try {
    assert.equal(await curl('old', 'first'), '200');
    writeFileSync(file, config('new', 'second'));
    await later();
    await curl('old', 'first'); // this request finds the change; the next connection has the new certificate
    assert.equal(await curl('new', 'second'), '200');
    assert.equal(await curl('new', 'first'), '401');
    assert.match(await curl('old', 'second'), /^failed/, 'the old certificate is gone');
    assert.ok(
      lines.some((l) => /reload\.yml reloaded/.test(l)),
      lines.join('\n'),
    );
    writeFileSync(file, 'tls_server_config:\n  cert_fil: new.crt\n');
    await later();
    assert.equal(await curl('new', 'second'), '200', 'the broken file changed nothing');
    assert.ok(
      lines.some((l) => /not reloaded: .*cert_fil is not a known field/.test(l)),
      lines.join('\n'),
    );
  } finally {
    await exp.close();
  }
});
