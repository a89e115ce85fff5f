// A loopback port nothing listens on now, from the kernel (bind to 0, read it, close): for the
// benchmarks and tests that must name a port before the process that listens on it starts. Another
// process may take it in between; rare on loopback, and each user fails loudly if it happens.
import dgram from 'node:dgram';
import net from 'node:net';

export async function freePort(kind: 'tcp' | 'udp' = 'tcp'): Promise<number> {
  if (kind === 'udp') {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    const { port } = s.address();
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  }
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
