// One AMQP 0-9-1 client of scripts/lib/rabbitmq.ts (npm amqplib), in its own process, so that the
// publisher → broker and broker → consumer connections belong to different pids:
//   node --import tsx scripts/lib/amqp-client.child.ts publish|consume URL QUEUE KIB COUNT SECONDS \
//     [classic|stream [UNCONFIRMED]]
// publish: a confirm channel publishes COUNT messages of KIB KiB (transient, to a non-durable queue it
//   declares; `stream`: a durable stream queue, x-queue-type stream, x-initial-cluster-size 2, seed
//   000's replicated stream), at most UNCONFIRMED (default 256) unconfirmed at a time (seed 000's
//   publisher waited for confirms); a message counts once the broker confirmed it.
// consume: prefetch 64, manual acks (seed 000's consumer); a message counts when it arrives.
// Either ends after COUNT messages, SECONDS seconds or SIGTERM/SIGINT, whichever comes first, and
// prints JSON lines on stdout: { event: 'ready', role, pid, localPort } once connected (the local
// port tells its socket apart in ss/inspect), then { event: 'done', role, messages, bytes, seconds,
// MBps, MiBps, perSecondMBps } (seconds: from ready to the last message counted; perSecondMBps: MB
// counted in each whole second after ready).
import amqp from 'amqplib';

const [role, url, queue, kibArg, countArg, secondsArg, type = 'classic', unconfirmedArg = '256'] =
  process.argv.slice(2);
const kib = Number(kibArg);
const count = Number(countArg);
const seconds = Number(secondsArg);
const maxUnconfirmed = Number(unconfirmedArg);
if (
  !['publish', 'consume'].includes(role) ||
  !url ||
  !queue ||
  !(kib > 0) ||
  !(count > 0) ||
  !(seconds > 0) ||
  !['classic', 'stream'].includes(type) ||
  !(maxUnconfirmed > 0)
)
  throw new Error(
    'usage: amqp-client.child.ts publish|consume URL QUEUE KIB COUNT SECONDS [classic|stream [UNCONFIRMED]]',
  );

const size = kib * 1024;
let messages = 0;
let t0 = performance.now();
let last = t0;
let finished = false;
let finish: () => void = () => {};
/** Messages counted at each whole second after ready. */
const marks: number[] = [];
let ticker: NodeJS.Timeout | undefined;
const done = new Promise<void>((r) => {
  finish = r;
});

function report(): void {
  if (finished) return;
  finished = true;
  const s = Math.max(1e-6, (last - t0) / 1000);
  const bytes = messages * size;
  const line = {
    event: 'done',
    role,
    messages,
    bytes,
    seconds: s,
    MBps: bytes / 1e6 / s,
    MiBps: bytes / 2 ** 20 / s,
    perSecondMBps: marks.map((m, i) => ((m - (i ? marks[i - 1] : 0)) * size) / 1e6),
  };
  clearInterval(ticker);
  process.stdout.write(`${JSON.stringify(line)}\n`);
  finish();
}
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, report);
const bound = setTimeout(report, seconds * 1000);

const conn = await amqp.connect(url, { noDelay: true });
conn.on('error', () => {});
// amqplib's connection object carries its socket as `stream` (not in its types)
const socket = (conn.connection as unknown as { stream?: { localPort?: number } }).stream;
const channel = role === 'publish' ? await conn.createConfirmChannel() : await conn.createChannel();
channel.on('error', () => {});
if (type === 'stream')
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-queue-type': 'stream', 'x-initial-cluster-size': 2 },
  });
else await channel.assertQueue(queue, { durable: false, autoDelete: false });
t0 = performance.now();
last = t0;
ticker = setInterval(() => marks.push(messages), 1000);
process.stdout.write(
  `${JSON.stringify({ event: 'ready', role, pid: process.pid, localPort: socket?.localPort })}\n`,
);

if (role === 'publish') {
  const body = Buffer.alloc(size, 0x5a);
  const ch = channel as amqp.ConfirmChannel;
  let sent = 0;
  let unconfirmed = 0;
  let waiting = false; // for 'drain': the socket's buffer is full
  const pump = () => {
    while (!waiting && !finished && sent < count && unconfirmed < maxUnconfirmed) {
      sent++;
      unconfirmed++;
      const ok = ch.sendToQueue(queue, body, { persistent: false }, (err) => {
        unconfirmed--;
        if (!err) {
          messages++;
          last = performance.now();
        }
        if (messages >= count) report();
        else pump();
      });
      if (!ok) {
        waiting = true;
        ch.once('drain', () => {
          waiting = false;
          pump();
        });
      }
    }
  };
  pump();
} else {
  await channel.prefetch(64);
  await channel.consume(queue, (msg) => {
    if (!msg || finished) return;
    channel.ack(msg);
    messages++;
    last = performance.now();
    if (messages >= count) report();
  });
}

await done;
clearTimeout(bound);
// close politely but never wait long: the parent bounds us anyway
await Promise.race([conn.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
process.exit(0);
