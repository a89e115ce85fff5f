// The lab measures itself (link-probe.child.ts run in its two hosts: ping-pong round trips, then a short
// autotuned TCP transfer), and says in one line what it is and what it measured.

import { EnvironmentError } from '../errors.js';
import { parseBoundedJson } from '../policy/json.js';
import { formatBitRate, formatDuration } from '../policy/units.js';
import { moduleFile } from '../sys/package.js';
import { Child, nodeCommand, run } from '../sys/process.js';
import { netnsCommand } from './netns.js';
import { type LabInfo, MAX_STATE_BYTES } from './registry.js';

export interface LabMeasurement {
  /** Round trips across the lab as the kernel measured them (TCP handshakes, tcp_info), median and minimum. */
  rttUs: number;
  minRttUs: number;
  /** Ping-pong between two processes (1-byte TCP messages), median: adds the processes' wake-ups. */
  appRttUs: number;
  /** What a short autotuned TCP transfer carried, as the receiver saw it: on average (slow start
   * included), and at best over 100 ms (once the window has opened). */
  bitsPerSecond: number;
  peakBitsPerSecond: number;
  seconds: number;
}

const PROBE_PORT = '5299';

/** Measures the lab `info` describes: `pings` round trips, then a `seconds` transfer. */
export async function measureLab(
  info: LabInfo,
  opts: { pings?: number; seconds?: number } = {},
): Promise<LabMeasurement> {
  const { file, args } = nodeCommand(moduleFile(new URL('./link-probe.child', import.meta.url)));
  const probe = [file, ...args];
  const to = info.hosts.server.ipv4;
  const server = new Child(netnsCommand(info, 'server', [...probe, 'serve', to, PROBE_PORT]));
  try {
    await new Promise<void>((resolve, reject) => {
      server.onLine(() => resolve());
      server.exited.then(() =>
        reject(
          new EnvironmentError(`lab probe server ${server.describeExit()}: ${server.stderrTail.join(' | ')}`),
        ),
      );
    });
    // each ping is a connection and an echo, one after another (two round trips); a push is its
    // seconds plus a few round trips: at a 2 s RTT 20 pings outlast run()'s default minute
    const client = async (mode: string, arg: string, timeoutMs: number) => {
      const r = await run(netnsCommand(info, 'client', [...probe, mode, to, PROBE_PORT, arg]), timeoutMs);
      if (r.code !== 0)
        throw new EnvironmentError(
          `lab ${mode} probe failed: ${r.stderr.trim() || `no result within ${timeoutMs / 1000} s`}`,
        );
      return r;
    };
    const pings = opts.pings ?? 20;
    const p = await client('ping', String(pings), 30_000 + pings * 3 * info.rttMs);
    const got0 = parseBoundedJson(p.stdout, { maxLength: MAX_STATE_BYTES }) as {
      rttUs: number[];
      kernelRttUs: number[];
    };
    const sorted = (xs: number[]) => xs.filter((x) => x > 0).sort((a, b) => a - b);
    const samples = sorted(got0.kernelRttUs);
    const app = sorted(got0.rttUs.slice(1));
    const seconds = opts.seconds ?? 1;
    const b = await client('push', String(seconds), 30_000 + seconds * 1000 + 10 * info.rttMs);
    const got = parseBoundedJson(b.stdout, { maxLength: MAX_STATE_BYTES }) as {
      bytes: number;
      seconds: number;
      peakBitsPerSecond: number;
    };
    return {
      rttUs: samples[samples.length >> 1],
      minRttUs: samples[0],
      appRttUs: app[app.length >> 1],
      bitsPerSecond: Math.round((got.bytes * 8) / got.seconds),
      peakBitsPerSecond: Math.round(got.peakBitsPerSecond),
      seconds: got.seconds,
    };
  } finally {
    await server.stop(2);
  }
}

/** One line for people about the lab and what it measured of itself. */
export function describeLab(info: LabInfo, m?: LabMeasurement): string {
  const cc = info.congestion
    ? `, tcp ${info.congestion}${info.congestionFrom === 'host' ? " (the host's default)" : ''}`
    : '';
  const asked = `rtt ${formatDuration(info.rttMs / 1000)}${info.bitsPerSecond ? `, bandwidth ${formatBitRate(info.bitsPerSecond)}` : ''}${info.loss ? `, loss ${info.loss * 100}%` : ''}${cc}`;
  const got = m
    ? `; measured rtt ${formatDuration(m.rttUs / 1e6)} (kernel, median of handshakes; min ${formatDuration(m.minRttUs / 1e6)}; process ping-pong ${formatDuration(m.appRttUs / 1e6)}), carried ${formatBitRate(m.peakBitsPerSecond)} at best over 100 ms, ${formatBitRate(m.bitsPerSecond)} on average (1 TCP stream, autotuned, 1 s)`
    : '';
  return `lab ${info.id}: ${asked}${got}; delay line: ${info.mode}; client ${info.hosts.client.ipv4}, server ${info.hosts.server.ipv4}`;
}
