// The lab's self-check, run as a child process inside a lab namespace: `serve HOST PORT` answers
// ping-pongs (first byte 'p') and swallows bulk transfers (first byte 'b', answered with a JSON
// line of what arrived); `ping HOST PORT COUNT` and `push HOST PORT SECONDS` print one JSON line.
// `ping` reports two round trips per sample: the kernel's (the handshake's, from tcp_info: the far
// kernel answers a SYN without waking any process, so this is the link) and the application's
// (a 1-byte echo between two Node processes, which adds their wake-ups on a busy host).
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fdOf } from '../sys/socket.js';
import { getTcpInfo } from '../sys/tcpinfo.js';

const PEAK_WINDOW_MS = 100;

function serve(host: string, port: number): void {
  const open = new Set<net.Socket>();
  const server = net.createServer((s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
    s.setNoDelay(true);
    let mode = '';
    let bytes = 0;
    let t0 = 0;
    // the highest rate over PEAK_WINDOW_MS windows: the mean includes slow start, the peak is what
    // the line carries once the window has opened
    let win0 = 0;
    let winBytes = 0;
    let peakBitsPerSecond = 0;
    s.on('data', (chunk: Buffer) => {
      if (!mode) {
        mode = String.fromCharCode(chunk[0]);
        chunk = chunk.subarray(1);
        t0 = performance.now();
        win0 = t0;
      }
      if (mode === 'p') s.write(chunk);
      else {
        bytes += chunk.length;
        const now = performance.now();
        if (now - win0 >= PEAK_WINDOW_MS) {
          peakBitsPerSecond = Math.max(peakBitsPerSecond, (winBytes * 8e3) / (now - win0));
          win0 = now;
          winBytes = 0;
        }
        winBytes += chunk.length;
      }
    });
    s.on('end', () => {
      const now = performance.now();
      const seconds = (now - t0) / 1000;
      // the last window counts when it lasted half a window: without it a short transfer whose
      // fastest stretch came last had a peak below its own mean (a 0.3 s run: 1.75 against 1.95 Gbit/s)
      if (now - win0 >= PEAK_WINDOW_MS / 2)
        peakBitsPerSecond = Math.max(peakBitsPerSecond, (winBytes * 8e3) / (now - win0));
      // and the peak of any stretch is at least the mean of the whole
      if (seconds > 0) peakBitsPerSecond = Math.max(peakBitsPerSecond, (bytes * 8) / seconds);
      if (mode === 'b') s.end(`${JSON.stringify({ bytes, seconds, peakBitsPerSecond })}\n`);
      else s.end();
    });
    s.on('error', () => s.destroy());
  });
  server.listen(port, host, () => process.stdout.write('ready\n'));
  // SIGTERM ends it with 0: the listener and every connection closed, nothing left to keep it up
  process.once('SIGTERM', () => {
    server.close();
    for (const s of open) s.destroy();
  });
}

function connect(host: string, port: number, first: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true }, () => {
      s.write(first);
      resolve(s);
    });
    s.once('error', reject);
  });
}

async function ping(host: string, port: number, count: number): Promise<void> {
  const kernelRttUs: number[] = [];
  for (let i = 0; i < count; i++) {
    const c = await connect(host, port, 'p');
    kernelRttUs.push(Number(getTcpInfo(fdOf(c)).rtt));
    c.destroy();
  }
  const s = await connect(host, port, 'p');
  const rttUs: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      s.once('data', () => resolve());
      s.write('x');
    });
    rttUs.push(Math.round((performance.now() - t0) * 1000));
  }
  s.end();
  process.stdout.write(`${JSON.stringify({ rttUs, kernelRttUs })}\n`);
}

async function push(host: string, port: number, seconds: number): Promise<void> {
  const s = await connect(host, port, 'b');
  const chunk = Buffer.alloc(256 * 1024);
  const until = performance.now() + seconds * 1000;
  let reply = '';
  s.on('data', (d) => {
    reply += d;
  });
  const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
  while (performance.now() < until) {
    if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
  }
  s.end();
  await closed;
  process.stdout.write(reply);
}

const [mode, host, port, arg] = process.argv.slice(2);
if (mode === 'serve') serve(host, Number(port));
else if (mode === 'ping') await ping(host, Number(port), Number(arg));
else if (mode === 'push') await push(host, Number(port), Number(arg));
else {
  process.stderr.write('usage: probe serve|ping|push HOST PORT [COUNT|SECONDS]\n');
  process.exitCode = 2;
}
