// One sender of scripts/udp-send-rate.ts, in its own process (pinned by the parent):
//   node --import tsx scripts/lib/udp-send.child.ts dgram|batch|gso PORT SECONDS SIZE
// dgram: node:dgram's send(), one datagram a call, on a connected socket, yielding every 64 sends;
// batch: sockbuf's sendBatch() of 1024 payloads a call without GSO; gso: the same with GSO (the
// payloads share a size, so they go as runs of 64). Payloads are random bytes (no test header: the
// C receiver counts datagrams). Prints one JSON line: { sent, seconds, datagramsPerSecond, cpuSeconds }.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { setImmediate as yieldNow } from 'node:timers/promises';
import { createUdpSender } from '../../src/udp/sender.js';

const [kind, portArg, secondsArg, sizeArg] = process.argv.slice(2);
const port = Number(portArg);
const seconds = Number(secondsArg);
const size = Number(sizeArg);
if (!['dgram', 'batch', 'gso'].includes(kind) || !(port > 0) || !(seconds > 0) || !(size >= 0))
  throw new Error('usage: udp-send.child.ts dgram|batch|gso PORT SECONDS SIZE');

let sent = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const end = t0 + seconds * 1000;
if (kind === 'dgram') {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.connect(port, '127.0.0.1', () => r()));
  const payload = randomBytes(size);
  while (performance.now() < end) {
    for (let i = 0; i < 64; i++) s.send(payload);
    sent += 64;
    await yieldNow();
  }
  await new Promise<void>((r) => s.close(() => r()));
} else {
  const s = await createUdpSender({ to: `127.0.0.1:${port}`, gso: kind === 'gso' });
  const payloads = Array.from({ length: 1024 }, () => randomBytes(size));
  while (performance.now() < end) sent += await s.sendBatch(payloads);
  s.close();
}
const secs = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
console.log(JSON.stringify({ sent, seconds: secs, datagramsPerSecond: Math.round(sent / secs), cpuSeconds }));
