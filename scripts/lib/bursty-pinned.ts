// Issue 44 item 5: does a socket pinned small, whose traffic comes in bursts further apart than the
// scrape interval, stay flagged on every scrape of the real exporter (`sockbuf exporter`, its own
// process)? Two cases on loopback, each with a reader that reads at once:
//   receiver: a listener pinned to SO_RCVBUF 8 KiB (its accepted socket inherits it), fed 256 KiB
//             bursts every 3 s by an autotuned sender; the receiver's series is counted (pinned-rcvbuf)
//   sender:   a client pinned to SO_SNDBUF 2 KiB (tb 4.5 KiB) that sends 1 MiB bursts every 3 s to a
//             sink across a 40 ms lab (~1.5 s busy a burst: measured 128 KiB bursts took ~190 ms, 6 % of
//             the time, and never met the rule's "busy most of the interval"); its series is counted
//             (pinned-sndbuf), and its busy ratio (the alert asks for > 0.1)
// With `reader` (HOST:PORT) the client connects there instead: a sink in a lab's server namespace,
// the script in its client namespace. Scraped every `scrapeSeconds` after a first scrape; bounded by `seconds` (at most 600) and by the
// bursts' size. Used by scripts/bursty-flags.ts (3 minutes) and test/observe/bursty-flags.test.ts.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SO_RCVBUF, SO_SNDBUF, SOCK_STREAM, SOL_SOCKET } from '../../src/sys/constants.js';
import {
  bindFd,
  connectFd,
  createSocket,
  listenFd,
  listenOnFd,
  setIntOption,
  socketFromFd,
} from '../../src/sys/socket.js';

export type Side = 'receiver' | 'sender';

export interface BurstyResult {
  side: Side;
  seconds: number;
  scrapeSeconds: number;
  scrapes: number;
  /** Scrapes where the pinned socket's series carried its flag. */
  flagged: number;
  /** Scrapes where that series was there at all (any of its series). */
  present: number;
  /** Scrapes where its busy ratio was above 0.1 (the alert's load condition; the sender's). */
  busy: number;
  /** The first counted scrape (1-based) that carried the flag; 0: none did. */
  firstFlagged: number;
  bytesSent: number;
}

const KIND: Record<Side, string> = { receiver: 'pinned-rcvbuf', sender: 'pinned-sndbuf' };

/** Runs one case; `cli` is the command line that starts sockbuf (node and its arguments). */
export async function burstyPinned(
  side: Side,
  cli: readonly string[],
  opts: {
    seconds: number;
    scrapeSeconds?: number;
    log?: (line: string) => void;
    reader?: string;
    warmUp?: number;
    /**
     * Bursts every 3 s timed from the scrapes (0.2 s after scrape 3k, 1.2 s after scrape 3k+1), so
     * that each ends well before the next scrape: no sample sees a burst in progress, the worst phase
     * for a rule that reads the queue at the sample. Default: every 3 s from the start, any phase.
     */
    lockPhase?: boolean;
  },
): Promise<BurstyResult> {
  const seconds = Math.min(600, opts.seconds);
  const scrape = opts.scrapeSeconds ?? 2;
  const log = opts.log ?? (() => {});
  // the reader: pinned (receiver case) or not (sender case); reads at once
  const server = net.createServer((c) => c.on('data', () => {}).on('error', () => {}));
  const lfd = createSocket('127.0.0.1', SOCK_STREAM);
  if (side === 'receiver') setIntOption(lfd, SOL_SOCKET, SO_RCVBUF, 8192);
  bindFd(lfd, { host: '127.0.0.1', port: 0 });
  listenFd(lfd);
  await listenOnFd(server, lfd);
  // the sender's case across a lab (READER=HOST:PORT, a sink in its server namespace): on loopback a
  // 128 KiB burst through a 2 KiB pin ends in 1-9 ms (the reader quick-ACKs after each idle gap), so
  // the pin limits nothing there
  const [host, port] = opts.reader
    ? [
        opts.reader.slice(0, opts.reader.lastIndexOf(':')),
        Number(opts.reader.slice(opts.reader.lastIndexOf(':') + 1)),
      ]
    : ['127.0.0.1', (server.address() as net.AddressInfo).port];
  const fd = createSocket(host, SOCK_STREAM);
  if (side === 'sender') setIntOption(fd, SOL_SOCKET, SO_SNDBUF, 2048);
  await connectFd(fd, { host, port }, 5);
  const client = socketFromFd(fd);
  client.on('error', () => {});
  const burst = Buffer.alloc(side === 'receiver' ? 256 * 1024 : 1024 * 1024, 1);
  let bytesSent = 0;
  const send = () => {
    if (client.destroyed) return;
    client.write(burst);
    bytesSent += burst.length;
  };
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      send();
    }, ms);
    timers.add(t);
  };
  let fetched = 0; // scrapes taken (the first included), for lockPhase
  const afterScrape = () => {
    const k = fetched++ % 3;
    if (opts.lockPhase && k < 2) later(k === 0 ? 200 : 1200);
  };
  if (!opts.lockPhase) send();
  const bursts = opts.lockPhase ? undefined : setInterval(send, 3000);

  const exporter = spawn(
    cli[0],
    [...cli.slice(1), 'exporter', '--listen', '127.0.0.1:0', '--no-host-counters', '--top', '1000'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const bound = setTimeout(() => exporter.kill('SIGKILL'), (seconds + 60) * 1000);
  const counts = { scrapes: 0, flagged: 0, present: 0, busy: 0, firstFlagged: 0 };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      exporter.stderr.on('data', (d) => {
        err += d;
        const m = /serving (\S+)/.exec(err);
        if (m) resolve(m[1]);
      });
      exporter.on('close', (code) => reject(new Error(`exporter exited ${code}: ${err}`)));
    });
    await (await fetch(url)).text(); // the first sample: ratios since each connection opened
    afterScrape();
    let warm = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      await sleep(scrape * 1000);
      const text = await (await fetch(url)).text();
      afterScrape();
      const mine = text
        .split('\n')
        .filter((l) => l.startsWith('sockbuf_socket_') && l.includes(`port="${port}"`));
      // the receiver's series: its accepted socket (not the sender's client series); the sender's: role client
      const ours = mine.filter((l) => (side === 'sender') === l.includes('role="client"'));
      const flagged = ours.some(
        (l) => l.startsWith('sockbuf_socket_flagged{') && l.includes(`kind="${KIND[side]}"`),
      );
      const busy = ours
        .filter((l) => l.startsWith('sockbuf_socket_busy_ratio{'))
        .map((l) => Number(l.split(' ').pop()));
      if (warm++ < (opts.warmUp ?? 0)) {
        log(`warm-up ${warm} ${flagged ? KIND[side] : '-'}`);
        continue;
      }
      counts.scrapes++;
      if (flagged) counts.flagged++;
      if (flagged && !counts.firstFlagged) counts.firstFlagged = counts.scrapes;
      if (ours.length) counts.present++;
      if (busy.some((b) => b > 0.1)) counts.busy++;
      log(`${counts.scrapes} ${flagged ? KIND[side] : '-'} busy ${busy.join(',') || '-'}`);
    }
  } finally {
    clearTimeout(bound);
    clearInterval(bursts);
    for (const t of timers) clearTimeout(t);
    exporter.kill('SIGTERM');
    client.destroy();
    server.close();
  }
  return { side, seconds, scrapeSeconds: scrape, ...counts, bytesSent };
}
