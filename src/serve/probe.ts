// One probe of the exporter's /probe: a short TCP test, bounded in time, against an iperf3 server (as
// `blast tcp --iperf3` runs it: runIperf3Blast) or a `sockbuf serve` (ServeClient asks for a far end,
// runTcpBlast sends to it, as `bench --remote` does), and its figures as one scrape's worth of
// sockbuf_probe_* metrics (prom-client). The probe ends by its cap whatever the peer does: at the cap
// every connection is closed and the answer is sockbuf_probe_success 0.
import { Gauge, Registry } from 'prom-client';
import { formatHostPort } from '../policy/address.js';
import { printable } from '../policy/printable.js';
import type { Figures, ProbeResult, ProbeRun } from './probe-figures.js';
import { probeIperf3 } from './probe-iperf3.js';
import { probeServe } from './probe-serve.js';

/** Runs one probe; never rejects: a failure is success false with the reason. */
export async function runProbe(run: ProbeRun): Promise<ProbeResult> {
  const started = performance.now();
  const where = formatHostPort({ host: run.address, port: run.port });
  const ac = new AbortController();
  let why: string | undefined;
  const stop = (reason: string) => {
    why ??= reason;
    ac.abort(new Error(reason));
  };
  const timer = setTimeout(() => stop(`ended by its cap of ${run.capSeconds} s`), run.capSeconds * 1000);
  const gone = () => stop('stopped: the HTTP client went away');
  if (run.signal?.aborted) gone();
  run.signal?.addEventListener('abort', gone, { once: true });
  // the cap holds even where no socket is open yet to close (a connect the peer never answers)
  const stopped = new Promise<never>((_, reject) => {
    ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true });
  });
  stopped.catch(() => {});
  const work = run.module === 'iperf3' ? probeIperf3(run, ac.signal) : probeServe(run, ac.signal);
  try {
    const figures = await Promise.race([work, stopped]);
    return { success: true, durationSeconds: (performance.now() - started) / 1000, ...figures };
  } catch (err) {
    work.catch(() => {}); // settles later, its sockets closed by the abort
    return {
      success: false,
      durationSeconds: (performance.now() - started) / 1000,
      error: printable(`${run.module} probe of ${where}: ${why ?? (err as Error).message}`),
    };
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener('abort', gone);
  }
}

const GAUGES: [keyof Figures, string, string][] = [
  ['sentBytes', 'sockbuf_probe_sent_bytes', 'Bytes this end wrote during the test.'],
  ['receivedBytes', 'sockbuf_probe_received_bytes', 'Bytes the far end counted (iperf3 server, serve sink).'],
  ['bytesPerSecond', 'sockbuf_probe_throughput_bytes_per_second', 'Bytes sent per second of the test.'],
  ['retransmits', 'sockbuf_probe_retransmits', 'Segments retransmitted during the test (tcp_info).'],
  ['rttSeconds', 'sockbuf_probe_rtt_seconds', 'Smoothed round-trip time at the end of the test (tcp_info).'],
  ['minRttSeconds', 'sockbuf_probe_min_rtt_seconds', 'Smallest round-trip time seen (tcp_info).'],
  [
    'rwndLimitedRatio',
    'sockbuf_probe_rwnd_limited_ratio',
    "Share of busy sending time limited by the peer's receive window.",
  ],
  [
    'sndbufLimitedRatio',
    'sockbuf_probe_sndbuf_limited_ratio',
    'Share of busy sending time limited by the send buffer.',
  ],
  ['peerWindowBytes', 'sockbuf_probe_peer_window_bytes', "The peer's advertised receive window at the end."],
  ['sendBufferBytes', 'sockbuf_probe_send_buffer_bytes', 'SO_SNDBUF of the sending socket at the end.'],
  [
    'sendBufferPinned',
    'sockbuf_probe_send_buffer_pinned',
    '1 when the send buffer was pinned, 0 when autotuned.',
  ],
  [
    'receiveBufferBytes',
    'sockbuf_probe_receive_buffer_bytes',
    "SO_RCVBUF of the far end's socket at the end (serve).",
  ],
  [
    'receiveBufferPinned',
    'sockbuf_probe_receive_buffer_pinned',
    "1 when the far end's receive buffer was pinned, 0 when autotuned (serve).",
  ],
];

/** The probe as the text exposition format; a failure's reason follows as a comment. */
export async function probeMetrics(r: ProbeResult): Promise<{ contentType: string; body: string }> {
  const registry = new Registry();
  const gauge = (name: string, help: string, v: number) =>
    new Gauge({ name, help, registers: [registry] }).set(v);
  gauge('sockbuf_probe_success', '1 when the probe ran its test to the end, else 0.', r.success ? 1 : 0);
  gauge('sockbuf_probe_duration_seconds', 'How long the probe took, connect to results.', r.durationSeconds);
  for (const [key, name, help] of GAUGES) {
    const v = r[key];
    if (typeof v === 'number' || typeof v === 'boolean') gauge(name, help, Number(v));
  }
  const body = await registry.metrics();
  return { contentType: registry.contentType, body: r.error ? `${body}# ${printable(r.error)}\n` : body };
}
