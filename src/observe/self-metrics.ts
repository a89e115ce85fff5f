// The exporter's own health, as node_exporter and kube-prometheus expect an exporter to show it:
// sockbuf_build_info, prom-client's default process_* and nodejs_* metrics, and per collector (the
// /proc readers and sock_diag) how long its last run took and whether it worked. A collector that
// fails leaves its series out of that scrape and sets its success to 0, instead of failing the whole
// scrape: the other collectors' series still arrive, and SockbufCollectorFailed (alerts.ts) says which.
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import { VERSION } from '../sys/package.js';

/**
 * Runs collectors and keeps, per name, the last run's time and outcome. A failure is told once (to
 * `onError`), not at every scrape: again only when its reason changes, and `onRecover` when the
 * collector works again.
 */
export class Collectors {
  readonly #last = new Map<string, { seconds: number; ok: boolean }>();
  readonly #failing = new Map<string, string>();
  constructor(
    private readonly onError: (collector: string, err: unknown) => void = () => {},
    private readonly onRecover: (collector: string) => void = () => {},
  ) {}

  /** `read()`, timed; when it throws, `fallback` instead (and the error goes to onError, once). */
  run<T>(name: string, read: () => T, fallback: T): T {
    const started = performance.now();
    try {
      const v = read();
      this.#last.set(name, { seconds: (performance.now() - started) / 1000, ok: true });
      if (this.#failing.delete(name)) this.onRecover(name);
      return v;
    } catch (err) {
      this.#last.set(name, { seconds: (performance.now() - started) / 1000, ok: false });
      const why = err instanceof Error ? err.message : String(err);
      if (this.#failing.get(name) !== why) {
        this.#failing.set(name, why);
        this.onError(name, err);
      }
      return fallback;
    }
  }

  /** name → the last run. */
  get last(): ReadonlyMap<string, { seconds: number; ok: boolean }> {
    return this.#last;
  }
}

/**
 * sockbuf_build_info and the default process metrics; call first. The scrape series (register them
 * last with registerScrapeMetrics) see every collector run of the scrape.
 */
export function registerBuildInfo(registry: Registry): void {
  new Gauge({
    name: 'sockbuf_build_info',
    help: 'A metric with a constant 1 labelled by the version of sockbuf and of Node.js it runs on.',
    labelNames: ['version', 'nodeversion'],
    registers: [registry],
  }).set({ version: VERSION, nodeversion: process.version }, 1);
  collectDefaultMetrics({ register: registry });
  // gauges named *_total, which promtool check metrics lints; nodejs_active_{handles,requests,resources}
  // (by type) say the same
  for (const what of ['handles', 'requests', 'resources'])
    registry.removeSingleMetric(`nodejs_active_${what}_total`);
}

/**
 * sockbuf_scrape_collector_{duration_seconds,success}{collector} and sockbuf_scrape_duration_seconds
 * (from the scrape's start, `started()`, to the last collector). Register after every collector.
 */
export function registerScrapeMetrics(
  registry: Registry,
  collectors: Collectors,
  started: () => number,
): void {
  new Gauge({
    name: 'sockbuf_scrape_collector_duration_seconds',
    help: "How long a collector's last run took.",
    labelNames: ['collector'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [collector, r] of collectors.last) this.set({ collector }, r.seconds);
    },
  });
  new Gauge({
    name: 'sockbuf_scrape_collector_success',
    help: "1 when a collector's last run worked, 0 when it failed (its series are left out).",
    labelNames: ['collector'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [collector, r] of collectors.last) this.set({ collector }, r.ok ? 1 : 0);
    },
  });
  new Gauge({
    name: 'sockbuf_scrape_duration_seconds',
    help: "How long this scrape's collectors took, from the request to the last collector.",
    registers: [registry],
    collect() {
      this.set((performance.now() - started()) / 1000);
    },
  });
}
