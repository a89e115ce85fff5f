// The anchor a Node user would otherwise pick (issue 45): a plain `net.createServer` whose 'data'
// handler only counts bytes, nothing of sockbuf on the read path. Run by the bench runner (`bench
// drain`'s `net` reader) and scripts/drain-bench.ts as `node net-drain.child.js --host H`:
//   prints {"event":"ready","host":H,"port":P}, accepts one connection, counts its bytes to the end, and
//   prints {"event":"result","reader":"net","bytes","reads","meanReadBytes","seconds","bytesPerSecond","cpuSeconds"}:
//   seconds from accept to the end of the stream, cpuSeconds the process's user + system from ready.
// It imports only node:net (and the event printer), so the process is what a plain server costs.
import net from 'node:net';
import { printEvent } from './event.js';

const i = process.argv.indexOf('--host');
const host = i > 0 ? process.argv[i + 1] : '127.0.0.1';
let cpu0 = process.cpuUsage();

const server = net.createServer((socket) => {
  server.close();
  const t0 = performance.now();
  let bytes = 0;
  let reads = 0;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    reads++;
  });
  socket.on('end', () => {
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    printEvent('result', {
      reader: 'net',
      bytes,
      reads,
      meanReadBytes: reads ? bytes / reads : 0,
      seconds,
      bytesPerSecond: bytes / seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    });
    socket.end();
  });
  socket.on('error', (err) => {
    process.stderr.write(`net-drain: ${err.message}\n`);
    process.exitCode = 1;
  });
});
server.listen(0, host, () => {
  const a = server.address() as net.AddressInfo;
  cpu0 = process.cpuUsage();
  printEvent('ready', { host, port: a.port });
});
