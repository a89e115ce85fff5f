// Issue 36 item 3: does a socket steadily limited by a pinned buffer stay flagged across scrapes?
// A sender with SO_SNDBUF 2048 (tb 4608: below one segment, each write waits for the reader's
// delayed ACK) writes to a reader that reads, on loopback, for SECONDS; the exporter is scraped every
// SCRAPE seconds, as Prometheus would. Counted per scrape: the connection's series flagged at all (the
// rules with FlagMemory's hold), flagged by a fresh finding (without the held flags), and flagged by
// the kinds the old rules had (rwnd-limited, sndbuf-limited: the baseline of the same run).
//   npx tsx scripts/flag-steadiness.ts [SECONDS=120] [SCRAPE=5]
// With READER=HOST:PORT the sender connects there instead (a reader in another namespace of a lab,
// e.g. `sockbuf lab up --rtt 40ms`, where the same pin holds the rate near 100 KB/s).
// Bounded: SECONDS (at most 600) and the sender's rate (the pin holds it near 100 KB/s).
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startExporter } from '../src/observe/exporter-server.js';
import { SO_SNDBUF, SOCK_STREAM, SOL_SOCKET } from '../src/sys/constants.js';
import { connectFd, createSocket, setIntOption, socketFromFd } from '../src/sys/socket.js';

const seconds = Math.min(600, Number(process.argv[2] ?? 120));
const scrape = Number(process.argv[3] ?? 5);

const server = net.createServer((c) => c.on('data', () => {}).on('error', () => {}));
const reader = process.env.READER?.split(':');
if (!reader) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const host = reader?.[0] ?? '127.0.0.1';
const port = reader ? Number(reader[1]) : (server.address() as net.AddressInfo).port;
const fd = createSocket(host, SOCK_STREAM);
setIntOption(fd, SOL_SOCKET, SO_SNDBUF, 2048);
await connectFd(fd, { host, port }, 5);
const client = socketFromFd(fd);
let written = 0;
const chunk = Buffer.alloc(256 * 1024, 1);
const pump = () => {
  while (!client.destroyed && client.write(chunk)) written += chunk.length;
};
client.on('drain', () => {
  written += chunk.length;
  pump();
});
pump();

const exp = await startExporter({ port: 0, hostCounters: false, top: 1000 });
const counts = { scrapes: 0, flagged: 0, fresh: 0, oldKinds: 0 };
const kindsSeen = new Map<string, number>();
const started = performance.now();
try {
  await (await fetch(exp.url)).text(); // the first sample: ratios since each connection opened
  while (performance.now() - started < seconds * 1000) {
    await sleep(scrape * 1000);
    const text = await (await fetch(exp.url)).text();
    const lines = text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('sockbuf_socket_flagged{') &&
          l.includes(`port="${port}"`) &&
          l.includes('role="client"'),
      );
    const kinds = lines.map((l) => /kind="([^"]+)"/.exec(l)?.[1] ?? '?');
    counts.scrapes++;
    if (kinds.length) counts.flagged++;
    if (kinds.some((k) => k === 'rwnd-limited' || k === 'sndbuf-limited')) counts.oldKinds++;
    for (const k of kinds) kindsSeen.set(k, (kindsSeen.get(k) ?? 0) + 1);
    const held = /flagged_sockets\{kind="pinned-sndbuf"\} (\d+)/.exec(text);
    if (held && Number(held[1]) > 0) counts.fresh++;
    process.stderr.write(`${counts.scrapes} ${kinds.join(',') || '-'}\n`);
  }
} finally {
  await exp.close();
  client.destroy();
  if (!reader) server.close();
}
const rate = written / ((performance.now() - started) / 1000);
const pct = (n: number) => `${((100 * n) / counts.scrapes).toFixed(1)} %`;
console.log(
  JSON.stringify({
    seconds,
    scrapeSeconds: scrape,
    bytesPerSecond: Math.round(rate),
    scrapes: counts.scrapes,
    flagged: pct(counts.flagged),
    pinnedSndbufAnySocketFresh: pct(counts.fresh),
    oldKinds: pct(counts.oldKinds),
    kinds: Object.fromEntries(kindsSeen),
  }),
);
