// The Prometheus exporter's HTTP server: /metrics with the host counters under node_exporter's names
// (host-metrics.ts), the per-socket series (exporter.ts), the exporter's own health (self-metrics.ts),
// and /probe when given. With a web configuration (web-config.ts, exporter-toolkit's format) it serves
// HTTPS and asks for basic authentication: a request without the right user and password gets 401 with
// WWW-Authenticate and no metrics, on every path.
import { statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { type Metric, Registry } from 'prom-client';
import { EnvironmentError, UsageError } from '../errors.js';
import { formatHostPort } from '../policy/address.js';
import { resolveFirst } from '../policy/resolve.js';
import { assertLinux } from '../sys/sys-error.js';
import { registerSocketMetrics, type SocketMetricsOptions } from './exporter.js';
import { registerHostMetrics } from './host-metrics.js';
import { registerMetrics } from './metrics.js';
import { Collectors, registerBuildInfo, registerScrapeMetrics } from './self-metrics.js';
import { basicAuth, loadWebConfig, type WebConfig } from './web-config.js';

const gzipped = promisify(gzip);

/**
 * Whether an Accept-Encoding header takes gzip: `gzip` (or `x-gzip`, or `*` when gzip is not named)
 * with a q-value above 0 (RFC 9110 §12.5.3). Pure. @internal (exported for its test)
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star: boolean | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const ok = q === undefined || Number(q) > 0;
    if (name.trim() === 'gzip' || name.trim() === 'x-gzip') return ok;
    if (name.trim() === '*') star = ok;
  }
  return star ?? false;
}

/** What startExporter takes: where it listens, which sockets it reports and how it is protected. */
export interface ExporterOptions extends SocketMetricsOptions {
  host?: string;
  port?: number;
  /**
   * node_exporter's host series (node_netstat_*, node_softnet_*, node_sockstat_*); default true. Off
   * where node_exporter already runs: the same series from two jobs double-count in sum(rate(...)).
   */
  hostCounters?: boolean;
  /** Also export sockbuf's own sockets of this process (registerMetrics). */
  own?: boolean;
  /**
   * What answers /probe: probeHandler(…) (serve/probe-http.ts: tests against iperf3 and sockbuf serve on
   * Prometheus's schedule). Without it /probe is off (404).
   */
  probe?: ((req: http.IncomingMessage, res: http.ServerResponse) => void) & { metrics?: readonly Metric[] };
  /**
   * exporter-toolkit's web configuration file (TLS, client certificates, basic_auth_users with bcrypt
   * hashes), read once at start; a file that is wrong is a UsageError naming webConfigFile.
   */
  webConfigFile?: string;
  /** Where a refused TLS client or a collector's failure is told (one line each). */
  log?: (line: string) => void;
}

/** A running exporter (`sockbuf exporter`): its address, and close(). */
export interface Exporter {
  /** http://host:port/metrics, or https:// with a TLS web configuration */
  url: string;
  registry: Registry;
  /** Stops serving and closes open connections. */
  close(): Promise<void>;
}

/** Serves /metrics on host:port (127.0.0.1:9477 by default). Port in use: EnvironmentError; off Linux: LinuxOnlyError (both exit 3). */
export async function startExporter(opts: ExporterOptions = {}): Promise<Exporter> {
  // every series comes from /proc and sock_diag: elsewhere it would serve only errors (exit 3)
  assertLinux('sockbuf exporter');
  const log = opts.log ?? (() => {});
  let web: WebConfig = opts.webConfigFile
    ? loadWebConfig(opts.webConfigFile)
    : { users: new Map(), headers: {}, files: [] };
  const registry = new Registry();
  const collectors =
    opts.collectors ??
    new Collectors(
      (name, err) =>
        log(
          `collector ${name} failed: ${err instanceof Error ? err.message : String(err)} ` +
            `(sockbuf_scrape_collector_success{collector="${name}"} 0 until it reads again)`,
        ),
      (name) => log(`collector ${name} reads again`),
    );
  let scrapeStarted = performance.now();
  registerBuildInfo(registry);
  if (opts.hostCounters !== false) registerHostMetrics(registry, undefined, collectors);
  registerSocketMetrics(registry, { ...opts, collectors });
  if (opts.own) registerMetrics(registry);
  for (const m of opts.probe?.metrics ?? []) registry.registerMetric(m);
  registerScrapeMetrics(registry, collectors, () => scrapeStarted);
  let authorized = web.users.size ? basicAuth(web.users) : undefined;
  // exporter-toolkit reads its file on every request: here a change to it (or to a certificate it
  // names) is looked for at most once a second, before a request and before a TLS handshake; a file
  // that has become wrong is logged and the one before stays in force
  const stamp = (files: string[]) => files.map((f) => statSync(f, { throwIfNoEntry: false })?.mtimeMs).join();
  let stamped = stamp(web.files);
  let looked = performance.now();
  const reload = () => {
    if (!opts.webConfigFile || performance.now() - looked < 1000) return;
    looked = performance.now();
    const now = stamp(web.files);
    if (now === stamped) return;
    stamped = now;
    try {
      const next = loadWebConfig(opts.webConfigFile);
      if (Boolean(next.tls) !== Boolean(web.tls))
        return log(
          `${opts.webConfigFile}: turning TLS on or off takes a restart; the file before stays in force`,
        );
      if (next.tls) (server as https.Server).setSecureContext(next.tls);
      web = next;
      stamped = stamp(web.files);
      authorized = web.users.size ? basicAuth(web.users) : undefined;
      log(`${opts.webConfigFile} reloaded`);
    } catch (err) {
      log(`${opts.webConfigFile} not reloaded: ${err instanceof UsageError ? err.describe() : String(err)}`);
    }
  };

  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    reload();
    for (const [k, v] of Object.entries(web.headers)) res.setHeader(k, v);
    if (authorized && !(await authorized(req.headers.authorization))) {
      res
        .writeHead(401, { 'www-authenticate': 'Basic', 'content-type': 'text/plain; charset=utf-8' })
        .end('Unauthorized\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      try {
        scrapeStarted = performance.now();
        const text = await registry.metrics();
        // gzip when asked, as node_exporter and exporter-toolkit do (a 10 000-socket scrape is MBs)
        const zipped = acceptsGzip(req.headers['accept-encoding']);
        const body = zipped ? await gzipped(text) : text;
        res
          .writeHead(200, {
            'content-type': registry.contentType,
            vary: 'accept-encoding',
            ...(zipped ? { 'content-encoding': 'gzip' } : {}),
          })
          .end(req.method === 'HEAD' ? undefined : body);
      } catch (err) {
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`${err instanceof Error ? err.message : err}\n`);
      }
    } else if (path === '/probe') {
      if (opts.probe) opts.probe(req, res);
      else
        res
          .writeHead(404, { 'content-type': 'text/plain' })
          .end('/probe is off: start the exporter with --probe-allow LIST (the targets it may test)\n');
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/metrics">sockbuf metrics</a>\n');
    } else {
      res.writeHead(404).end();
    }
  };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    serve(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500).end(`${err instanceof Error ? err.message : err}\n`);
    });
  };
  const server = web.tls ? https.createServer(web.tls, handler) : http.createServer(handler);
  server.on('connection', reload);
  if (web.tls) {
    server.on('secureConnection', (socket: TLSSocket) => {
      const why = web.checkClient?.(socket);
      if (why) {
        log(
          `TLS client ${formatHostPort({ host: socket.remoteAddress ?? '?', port: socket.remotePort ?? 0 })} refused: ${why}`,
        );
        socket.destroy();
      }
    });
  }
  const name = opts.host ?? '127.0.0.1';
  const host = await resolveFirst(name, {
    option: 'listen',
    value: formatHostPort({ host: name, port: opts.port ?? 9477 }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = formatHostPort({ host, port: opts.port ?? 9477 });
      const cause = { cause: err };
      if (err.code === 'EADDRINUSE')
        reject(new EnvironmentError(`exporter: ${where} is already in use`, cause));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new EnvironmentError(`exporter: ${where}: no such local address`, cause));
      else if (err.code === 'EACCES')
        reject(new EnvironmentError(`exporter: ${where}: permission denied`, cause));
      else reject(err);
    });
    server.listen(opts.port ?? 9477, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 9477);
  return {
    url: `${web.tls ? 'https' : 'http'}://${formatHostPort({ host, port })}/metrics`,
    registry,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
