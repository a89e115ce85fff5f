// Seed 004's "netcat instead of receive": OpenBSD netcat as the UDP receiver, run by the bench runner as
// `node nc-udp.child.js --host H --size S [--idle 1s]`. `nc -u -l` binds, takes the first sender (it connects
// to it: datagrams from other ports are dropped) and writes every datagram's bytes to stdout as one
// stream; here that goes to a file, and the datagrams are counted from it afterwards: whole data
// datagrams of the fixed size, the sender's trailers apart (ends/udp-header.ts splitDatagramStream).
// Kernel drops are the socket's own, read from /proc/net/udp{,6} before nc is stopped.
import dgram from 'node:dgram';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EnvironmentError } from '../errors.js';
import { OPTIONS } from '../policy/option-registry.js';
import { parseDuration, parseSize } from '../policy/units.js';
import { Child, which } from '../sys/process.js';
import { printEvent } from './event.js';
import { splitDatagramStream } from './udp-header.js';

function args(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  return out;
}

/** The `drops` column of a socket bound to `port` in /proc/net/udp and udp6 (undefined if none is). */
export function udpDrops(port: number, tables: string[]): number | undefined {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const t of tables)
    for (const line of t.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(hex)) return Number(f[f.length - 1]);
    }
  return undefined;
}

const readTables = () =>
  ['/proc/net/udp', '/proc/net/udp6'].map((p) => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return '';
    }
  });

async function main(): Promise<void> {
  const a = args(process.argv.slice(2));
  const size = parseSize(a.size ?? OPTIONS.blastSize.default, '--size');
  const idleMs = parseDuration(a.idle ?? '1s', '--idle') * 1000;
  const host = a.host ?? '127.0.0.1';
  const nc = which('nc');
  if (!nc) {
    // the environment lacks it (status 3, as a sockbuf command's)
    process.stderr.write('nc is not installed (Debian: netcat-openbsd)\n');
    process.exitCode = 3;
    return;
  }
  // a free port: bound here, released, handed to nc
  const probe = dgram.createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  const port = await new Promise<number>((resolve, reject) => {
    probe.once('error', reject);
    probe.bind(0, host, () => resolve(probe.address().port));
  });
  probe.close();
  const dir = await mkdtemp(join(tmpdir(), 'sockbuf-nc-'));
  const file = join(dir, 'stream');
  const child = new Child({
    file: 'sh',
    args: ['-c', 'exec "$0" -u -l -n "$1" "$2" > "$3"', nc, host, String(port), file],
  });
  try {
    for (let t = 0; udpDrops(port, readTables()) === undefined; t += 10) {
      if (!child.running || t > 5000)
        throw new EnvironmentError(`nc did not bind ${host}:${port}: ${child.stderrTail.join(' ')}`);
      await sleep(10);
    }
    printEvent('ready', { host, port });
    let bytes = 0;
    let last = 0;
    // when the stream grew to how many bytes: the last data datagram's arrival, found afterwards
    const grew: [number, number][] = [];
    let stop = false;
    process.once('SIGTERM', () => {
      stop = true;
    });
    while (!stop && child.running) {
      await sleep(10);
      const now = statSync(file).size;
      if (now !== bytes) {
        bytes = now;
        last = performance.timeOrigin + performance.now();
        grew.push([last, now]);
      } else if (last && performance.timeOrigin + performance.now() - last >= idleMs) break;
    }
    const kernelDrops = udpDrops(port, readTables()) ?? 0;
    const cpu = procCpuSeconds(child.pid);
    await child.stop();
    const stream = readFileSync(file);
    const { data, trailers, rest, dataEnd } = splitDatagramStream(stream, size);
    const lastData = grew.find(([, n]) => n >= dataEnd)?.[0];
    printEvent('result', {
      receiver: 'netcat',
      received: data,
      trailers,
      unparsedBytes: rest,
      bytes: stream.length,
      kernelDrops,
      kernelDropsUnit: 'datagrams',
      // to the 10 ms this end looks at the stream
      lastReceivedAtMs: data && lastData ? lastData : null,
      cpuUsPerDatagram: cpu !== undefined && data ? (cpu * 1e6) / data : null,
      gro: false,
    });
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** utime + stime of a process, in seconds (undefined when it is gone). */
function procCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
