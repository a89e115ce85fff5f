// `sockbuf exporter --web.config.file FILE`: TLS and basic authentication in the Prometheus ecosystem's
// own format, exporter-toolkit's web configuration (docs/web-configuration.md of
// prometheus/exporter-toolkit), so that a file written for node_exporter, and Prometheus's
// scrape_config with tls_config and basic_auth, work unchanged. As there: unknown fields are refused,
// paths are relative to the file's folder, an empty file (or one without a certificate) serves plain
// HTTP, passwords are bcrypt hashes (bcryptjs: pure JavaScript, so no native build or install script
// on the hosts that run the exporter), and a checked password is cached so that a scrape does not pay
// bcrypt's cost each time; a change to the file or to a certificate it names is picked up without a
// restart (exporter-server.ts looks at most once a second). What sockbuf does not do is refused by
// name rather than ignored: cipher_suites (Node's defaults apply) and rate_limit.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import { dirname, resolve } from 'node:path';
import type { TLSSocket } from 'node:tls';
import bcrypt from 'bcryptjs';
import { parse } from 'yaml';
import { UsageError } from '../errors.js';

const OPTION = 'webConfigFile';

/** What the exporter's HTTP server does with the file: TLS options, users, extra headers. */
export interface WebConfig {
  /** https.createServer's options; absent: plain HTTP. */
  tls?: https.ServerOptions;
  /** client_auth_type's checks that Node's own options cannot say, run on each TLS connection. */
  checkClient?: (socket: TLSSocket) => string | undefined;
  /** basic_auth_users: name → bcrypt hash; empty: no authentication. */
  users: ReadonlyMap<string, string>;
  /** http_server_config.headers, added to every response. */
  headers: Record<string, string>;
  /** The files it was read from (the file itself, certificates, keys, CAs): a change to one reloads it. */
  files: string[];
}

const FIELDS: Record<string, readonly string[]> = {
  '': ['tls_server_config', 'http_server_config', 'basic_auth_users', 'rate_limit'],
  tls_server_config: [
    'cert',
    'key',
    'client_ca',
    'cert_file',
    'key_file',
    'client_auth_type',
    'client_ca_file',
    'client_allowed_sans',
    'min_version',
    'max_version',
    'cipher_suites',
    'prefer_server_cipher_suites',
    'curve_preferences',
  ],
  http_server_config: ['http2', 'headers'],
  'http_server_config.headers': [
    'Content-Security-Policy',
    'X-Frame-Options',
    'X-Content-Type-Options',
    'X-XSS-Protection',
    'Strict-Transport-Security',
  ],
};

const CLIENT_AUTH = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
const VERSIONS: Record<string, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = {
  TLS10: 'TLSv1',
  TLS11: 'TLSv1.1',
  TLS12: 'TLSv1.2',
  TLS13: 'TLSv1.3',
};
/** Go's crypto/tls curve names → OpenSSL's. */
const CURVES: Record<string, string> = {
  CurveP256: 'P-256',
  CurveP384: 'P-384',
  CurveP521: 'P-521',
  X25519: 'X25519',
};
const BCRYPT = /^\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}$/;

type Obj = Record<string, unknown>;

/**
 * Parses the file's text; `dir` is where relative paths start (the file's folder) and `read` reads
 * a file (tests pass their own). UsageError naming webConfigFile for anything wrong.
 */
export function parseWebConfig(
  text: string,
  file: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): WebConfig {
  const bad = (why: string): never => {
    throw new UsageError((name) => `${name(OPTION)} ${file}: ${why}`, OPTION, { value: file });
  };
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (err) {
    return bad(`not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const object = (v: unknown, where: string): Obj => {
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) return bad(`${where || 'the file'} must be a mapping`);
    const known = FIELDS[where];
    for (const k of Object.keys(v))
      if (known && !known.includes(k)) bad(`field ${where ? `${where}.` : ''}${k} is not a known field`);
    return v as Obj;
  };
  const str = (o: Obj, k: string, where: string): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') return bad(`${where}.${k} must be a string`);
    return v;
  };
  const list = (o: Obj, k: string, where: string): string[] => {
    const v = o[k] ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
      return bad(`${where}.${k} must be a list of strings`);
    return v as string[];
  };
  const top = object(doc, '');
  if (top.rate_limit !== undefined && top.rate_limit !== null)
    bad('rate_limit is not supported by sockbuf exporter (the exporter caps /probe itself); remove it');
  const users = new Map<string, string>();
  for (const [name, hash] of Object.entries(object(top.basic_auth_users, 'basic_auth_users'))) {
    if (typeof hash !== 'string' || !BCRYPT.test(hash))
      bad(`basic_auth_users.${name} is not a bcrypt hash ($2y$10$…, from htpasswd -nBC 10 "")`);
    users.set(name, hash as string);
  }
  const http = object(top.http_server_config, 'http_server_config');
  if (http.http2 !== undefined && typeof http.http2 !== 'boolean')
    bad('http_server_config.http2 must be true or false');
  const headers: Record<string, string> = {};
  const h = object(http.headers, 'http_server_config.headers');
  for (const k of Object.keys(h)) {
    const v = str(h, k, 'http_server_config.headers');
    if (v === undefined) continue;
    if (k === 'X-Frame-Options' && !/^(deny|sameorigin)$/i.test(v))
      bad('X-Frame-Options must be deny or sameorigin');
    if (k === 'X-Content-Type-Options' && v.toLowerCase() !== 'nosniff')
      bad('X-Content-Type-Options must be nosniff');
    headers[k] = v;
  }

  const where = 'tls_server_config';
  const t = object(top.tls_server_config, where);
  const dir = dirname(resolve(file));
  const files = [resolve(file)];
  // inline PEM or a file, not both
  const pem = (inline: string, path: string): string | undefined => {
    const i = str(t, inline, where);
    const p = str(t, path, where);
    if (i && p) bad(`at most one of ${inline} and ${path} must be configured`);
    if (!p) return i;
    try {
      files.push(resolve(dir, p));
      return read(resolve(dir, p));
    } catch (err) {
      return bad(`${where}.${path} ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const cert = pem('cert', 'cert_file');
  const key = pem('key', 'key_file');
  const ca = pem('client_ca', 'client_ca_file');
  const authType = str(t, 'client_auth_type', where) ?? 'NoClientCert';
  if (!(CLIENT_AUTH as readonly string[]).includes(authType))
    bad(`client_auth_type ${authType} is none of ${CLIENT_AUTH.join(', ')}`);
  const sans = list(t, 'client_allowed_sans', where);
  if (list(t, 'cipher_suites', where).length)
    bad("cipher_suites is not supported by sockbuf exporter (Node's default suites apply); remove it");
  const curves = list(t, 'curve_preferences', where).map((c) => CURVES[c] ?? bad(`unknown curve ${c}`));
  const version = (k: string) => {
    const v = str(t, k, where);
    return v === undefined
      ? undefined
      : (VERSIONS[v] ?? bad(`${k} ${v} is none of ${Object.keys(VERSIONS).join(', ')}`));
  };
  const minVersion = version('min_version') ?? 'TLSv1.2';
  const maxVersion = version('max_version') ?? 'TLSv1.3';
  const prefer = t.prefer_server_cipher_suites ?? true;
  if (typeof prefer !== 'boolean') bad(`${where}.prefer_server_cipher_suites must be true or false`);
  if (!cert && !key) {
    if (Object.keys(t).length && (ca || sans.length || authType !== 'NoClientCert'))
      bad('client authentication needs cert_file and key_file');
    return { users, headers, files };
  }
  if (!cert) bad('missing cert_file');
  if (!key) bad('missing key_file');
  if (ca && authType === 'NoClientCert') bad("client CA's have been configured without a client_auth_type");
  if (sans.length && authType !== 'RequireAnyClientCert' && authType !== 'RequireAndVerifyClientCert')
    bad('client_allowed_sans needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert');
  const requestCert = authType !== 'NoClientCert';
  const tls: https.ServerOptions = {
    cert,
    key,
    ca,
    minVersion,
    maxVersion,
    honorCipherOrder: prefer as boolean,
    requestCert,
    // Node verifies and requires in one switch; the two in-between policies are checked per connection
    rejectUnauthorized: authType === 'RequireAndVerifyClientCert',
    ...(curves.length ? { ecdhCurve: curves.join(':') } : {}),
  };
  const checkClient = (socket: TLSSocket): string | undefined => {
    const peer = socket.getPeerCertificate();
    const given = peer && Object.keys(peer).length > 0;
    if (authType === 'RequireAnyClientCert' && !given) return 'no client certificate';
    if (authType === 'VerifyClientCertIfGiven' && given && !socket.authorized)
      return `client certificate not verified (${socket.authorizationError})`;
    if (sans.length) {
      const names = (peer?.subjectaltname ?? '').split(', ').map((s) => s.slice(s.indexOf(':') + 1));
      if (!names.some((n) => sans.includes(n))) return 'client certificate has none of client_allowed_sans';
    }
    return undefined;
  };
  return { tls, checkClient: requestCert ? checkClient : undefined, users, headers, files };
}

/** Reads and parses the file (UsageError naming webConfigFile when it cannot be read). */
export function loadWebConfig(file: string): WebConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      (name) => `${name(OPTION)} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      OPTION,
      { value: file },
    );
  }
  return parseWebConfig(text, file);
}

/** What an unknown user's password is checked against, so that a wrong name costs what a wrong password does. */
const DUMMY = '$2b$10$b9AFm8nwA3TObbiTrxAYLOrK6NtLj8j.KCCncVBg6Hncs34NFJvgq';
const CACHE_SIZE = 100;

/**
 * The basic-auth check: true when `authorization` (the request's header) names a user of `users`
 * with the right password. A checked name and password (its SHA-256, never the password) is cached.
 */
export function basicAuth(
  users: ReadonlyMap<string, string>,
): (authorization: string | undefined) => Promise<boolean> {
  const cache = new Map<string, boolean>();
  return async (authorization) => {
    const m = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) return false;
    const text = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon < 0) return false;
    const [user, password] = [text.slice(0, colon), text.slice(colon + 1)];
    const hash = users.get(user);
    const key = `${user}\0${hash}\0${createHash('sha256').update(password).digest('hex')}`;
    const known = cache.get(key);
    if (known !== undefined) return known;
    const ok = (await bcrypt.compare(password, hash ?? DUMMY)) && hash !== undefined;
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(key, ok);
    return ok;
  };
}
