// The exporter's /probe?target=HOST[:PORT]&module=iperf3|sockbuf, in blackbox_exporter's convention:
// Prometheus passes each target through relabelling and gets one scrape's worth of sockbuf_probe_*
// metrics back (probe.ts). The endpoint can make this host send traffic, so it is guarded: only targets
// in --probe-allow (probe-allow.ts), one probe per target at a time, a global cap on probes at once, and
// a cap on each probe's time, lowered to Prometheus's scrape timeout when it sends one. Each refusal
// is an HTTP status with the reason in the body, checked in this order: 400 a bad query, 403 a target
// outside the list, 429 the target is being probed, 503 too many probes at once; each is counted by
// reason (sockbuf_probe_refused_total, served on the exporter's /metrics), logged with the client's
// address, and a target quoted back is cut to TARGET_SHOWN characters.
import type http from 'node:http';
import { isIP } from 'node:net';
import { Counter } from 'prom-client';
import { formatHostPort, parseTo } from '../policy/address.js';
import type { BufferSize } from '../policy/buffers.js';
import { checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { printable } from '../policy/printable.js';
import { probeMetrics, runProbe } from './probe.js';
import { checkTarget, coversEverything, type ProbeAllowList, parseProbeAllow } from './probe-allow.js';
import { PROBE_MODULES, PROBE_PORTS, type ProbeModule, type ProbeResult } from './probe-figures.js';

export interface ProbeOptions {
  /** Whom /probe may test: host names, addresses and CIDR ranges (a list, or one comma-separated string). */
  allow: string | readonly string[];
  /** How long each test sends: ms, or a string with its unit ('2s'); default 2 s. */
  duration?: number | string;
  /** The most a whole probe may take (connect, test, results); default 10 s. */
  maxDuration?: number | string;
  /** Probes running at once, over all targets; default 2. */
  maxConcurrent?: number;
  /** The send buffer of every probe: 'auto' (default) or a size to pin. */
  sndbuf?: BufferSize;
  /** sockbuf serve's token, for serves that ask for one. */
  token?: string;
  /** One line per probe and per refusal (where from, what, how it went). */
  log?: (line: string) => void;
}

/** What Prometheus's scrape timeout leaves the probe: the timeout less this much (blackbox's offset). */
const TIMEOUT_OFFSET_SECONDS = 0.5;
/** Targets being resolved at once (a look-up waits on DNS, not on this host). */
const MAX_RESOLVING = 16;
/** Of the probe's time, the part kept for connecting and the results: at most this much. */
const RESERVE_SECONDS = 1;

/** A probe's time: its cap, lowered to the scrape timeout less the offset; the test leaves room. Pure. */
export function probeTimes(
  durationSeconds: number,
  capSeconds: number,
  scrapeTimeout?: string,
): { capSeconds: number; seconds: number } {
  const t = Number(scrapeTimeout);
  const cap =
    scrapeTimeout !== undefined && t > 0
      ? Math.min(capSeconds, t - Math.min(TIMEOUT_OFFSET_SECONDS, t / 2))
      : capSeconds;
  return { capSeconds: cap, seconds: Math.min(durationSeconds, cap - Math.min(RESERVE_SECONDS, cap / 2)) };
}

/** The most of a target an answer or a log line quotes: a longer one is cut, with its length said. */
export const TARGET_SHOWN = 100;

/** `text` with every run of more than TARGET_SHOWN characters without a space cut. Pure. */
export function cutLong(text: string): string {
  return text.replace(
    new RegExp(`\\S{${TARGET_SHOWN + 1},}`, 'g'),
    (w) => `${w.slice(0, TARGET_SHOWN)}… (${w.length} characters)`,
  );
}

/** The /probe handler; `metrics` are its own series, which startExporter serves on /metrics. */
export type ProbeHandler = ((req: http.IncomingMessage, res: http.ServerResponse) => void) & {
  metrics: readonly Counter[];
};

/** Parses the query: a target and a module, or the reason they are wrong. Pure. */
export function parseProbeQuery(
  search: URLSearchParams,
): { module: ProbeModule; host: string; port: number } | { error: string } {
  const target = search.get('target');
  const module = search.get('module');
  if (!module || !(PROBE_MODULES as readonly string[]).includes(module))
    return { error: `module must be one of ${PROBE_MODULES.join(', ')}` };
  if (!target) return { error: 'target is missing: /probe?target=HOST:PORT&module=…' };
  const m = module as ProbeModule;
  const bare = target.startsWith('[') && target.endsWith(']') ? target.slice(1, -1) : target;
  // HOST alone (an IPv6 address bare or in brackets too) takes the module's port
  const withPort = isIP(bare)
    ? `[${bare}]:${PROBE_PORTS[m]}`
    : bare.includes(':')
      ? target
      : `${target}:${PROBE_PORTS[m]}`;
  try {
    const hp = parseTo(withPort, 'target');
    return { module: m, host: hp.host, port: hp.port };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The /probe handler, its options checked at once (UsageError naming the option). */
const clients = new WeakMap<http.IncomingMessage, string>();

/** Who sent a request (`[::1]:40000`), read while it was connected; said plainly when it never was. */
function clientOf(req: http.IncomingMessage): string {
  let who = clients.get(req);
  if (who === undefined) {
    const { remoteAddress: host, remotePort: port } = req.socket;
    who =
      host === undefined
        ? 'a client that had already disconnected'
        : formatHostPort({ host, port: port ?? 0 });
    clients.set(req, who);
  }
  return who;
}

export function probeHandler(opts: ProbeOptions): ProbeHandler {
  const allow: ProbeAllowList = parseProbeAllow(opts.allow, 'allow');
  const duration =
    checkOption('probeDuration', opts.duration ?? OPTIONS.probeDuration.default, 'duration') / 1000;
  const maxDuration =
    checkOption('probeMaxDuration', opts.maxDuration ?? OPTIONS.probeMaxDuration.default, 'maxDuration') /
    1000;
  const maxConcurrent = checkWhole('maxConcurrent', opts.maxConcurrent ?? OPTIONS.maxConcurrent.default);
  const log = opts.log ?? (() => {});
  const everything = coversEverything(allow);
  if (everything)
    log(
      `warning: --probe-allow ${everything} covers every address: /probe can make this host send to any ` +
        'host on the Internet; list the far ends or their ranges instead',
    );
  /** target → when its running probe ends at the latest (its cap), for Retry-After */
  const running = new Map<string, number>();
  let resolving = 0;
  const refused = new Counter({
    name: 'sockbuf_probe_refused_total',
    help: 'Probes refused, by reason: bad-query (400), not-allowed (403), target-busy (429), too-many (503).',
    labelNames: ['reason'],
    registers: [],
  });
  for (const reason of ['bad-query', 'not-allowed', 'target-busy', 'too-many']) refused.inc({ reason }, 0);

  const refuse = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    status: number,
    reason: string,
    extra: Record<string, string> = {},
  ) => {
    const why = { 400: 'bad-query', 403: 'not-allowed', 429: 'target-busy' }[status as 400] ?? 'too-many';
    refused.inc({ reason: why });
    // a reason quotes the query: its control characters are shown escaped, in the body and the log
    const text = printable(cutLong(reason));
    log(`probe refused (${status}) from ${clientOf(req)}: ${text}`);
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...extra }).end(`${text}\n`);
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // read now: once the client has left, the socket no longer says who it was
    clientOf(req);
    const q = parseProbeQuery(new URL(req.url ?? '/', 'http://x').searchParams);
    if ('error' in q) return refuse(req, res, 400, q.error);
    // name look-ups are bounded too: a flood of requests cannot queue resolver work without end
    if (resolving >= MAX_RESOLVING)
      return refuse(req, res, 503, `${resolving} probe targets being resolved, the most at once`, {
        'retry-after': '1',
      });
    resolving++;
    void checkTarget(allow, q.host)
      .finally(() => resolving--)
      .then(async (verdict) => {
        if (!verdict.allowed) return refuse(req, res, 403, verdict.reason);
        const key = `${q.module} ${formatHostPort({ host: verdict.address, port: q.port })}`;
        const ends = running.get(key);
        if (ends !== undefined)
          return refuse(req, res, 429, `${key} is being probed: one probe per target at a time`, {
            'retry-after': String(Math.max(1, Math.ceil((ends - performance.now()) / 1000))),
          });
        if (running.size >= maxConcurrent)
          return refuse(
            req,
            res,
            503,
            `${running.size} probe(s) running, the most this exporter runs at once (${maxConcurrent})`,
            { 'retry-after': '1' },
          );
        const times = probeTimes(
          duration,
          maxDuration,
          req.headers['x-prometheus-scrape-timeout-seconds'] as string,
        );
        running.set(key, performance.now() + times.capSeconds * 1000);
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        let r: ProbeResult;
        try {
          r = await runProbe({
            module: q.module,
            address: verdict.address,
            port: q.port,
            ...times,
            sndbuf: opts.sndbuf,
            token: opts.token,
            signal: gone.signal,
          });
        } finally {
          running.delete(key);
        }
        const rate =
          r.bytesPerSecond === undefined ? '' : `, ${((r.bytesPerSecond * 8) / 1e9).toFixed(2)} Gbit/s`;
        log(
          printable(
            `probe ${key} from ${clientOf(req)}: ${r.success ? 'success' : r.error}${rate} in ${r.durationSeconds.toFixed(2)} s`,
          ),
        );
        const { contentType, body } = await probeMetrics(r);
        if (!res.destroyed)
          res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body);
      })
      .catch((err: Error) => {
        if (!res.headersSent)
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`${printable(cutLong(err.message))}\n`);
      });
  };
  return Object.assign(handler, { metrics: [refused] });
}
