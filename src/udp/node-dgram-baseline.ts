// node:dgram as the baseline receiver: one recvmsg and one JavaScript callback per datagram. Same
// buffer policy as the batch receiver, and the same kernel drop counter (SO_MEMINFO on its fd). The
// socket is made and bound through src/sys and handed to dgram (bind({ fd })), so the fd is ours to
// know without reading dgram's deprecated _handle (DEP0112).
import type dgram from 'node:dgram';
import { EnvironmentError, SysError } from '../errors.js';
import { formatHostPort, type HostPort, parseListen } from '../policy/address.js';
import { applyUdpRcvbuf } from '../policy/apply.js';
import type { UdpRcvbufReport } from '../policy/buffers.js';
import { checkOption, OPTIONS } from '../policy/option-registry.js';
import { resolveFirst } from '../policy/resolve.js';
import { SOCK_DGRAM } from '../sys/constants.js';
import { builtinOriginal } from '../sys/module-hook.js';
import { bindFd, closeFd, createSocket } from '../sys/socket.js';
import { observeUdpHost, udpKernelDrops } from './kernel-drops.js';

export interface DgramReceiverOptions {
  listen: string | HostPort;
  rcvbuf?: number | string;
  onMessage: (msg: Buffer, recvUs: number, from: string) => void;
}

export interface DgramReceiver {
  /** The address bound (a host name resolved to its first address). */
  host: string;
  port: number;
  stats(): {
    received: number;
    bytes: number;
    batches: number;
    kernelDrops: number;
    hostRcvbufErrors: number;
    rcvbuf: number;
    rcvbufReport: UdpRcvbufReport;
    jsCallsPerDatagram: number;
  };
  /** Counts from zero again (after a warm-up), as UdpReceiver#resetStats. */
  resetStats(): void;
  close(): Promise<void>;
}

export async function createDgramReceiver(o: DgramReceiverOptions): Promise<DgramReceiver> {
  const parsed = typeof o.listen === 'string' ? parseListen(o.listen) : o.listen;
  const listen = {
    host: await resolveFirst(parsed.host, { option: 'listen', value: formatHostPort(parsed) }),
    port: parsed.port,
  };
  const rcvbuf = checkOption('receiverRcvbuf', o.rcvbuf ?? OPTIONS.receiverRcvbuf.default, 'rcvbuf');
  const fd = createSocket(listen.host, SOCK_DGRAM);
  let report: UdpRcvbufReport;
  try {
    report = applyUdpRcvbuf(fd, rcvbuf);
    bindFd(fd, listen);
  } catch (e) {
    closeFd(fd);
    if (e instanceof SysError && ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL'].includes(e.code))
      throw new EnvironmentError(`cannot listen on ${formatHostPort(listen)}: ${e.code}`, { cause: e });
    throw e;
  }
  const socket = builtinOriginal<typeof dgram>('dgram').createSocket(
    listen.host.includes(':') ? 'udp6' : 'udp4',
  );
  // dgram owns the fd from here: socket.close() closes it
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ fd }, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  let hostBase = observeUdpHost();
  let dropBase = 0;
  let received = 0;
  let bytes = 0;
  let finalDrops: number | undefined;
  socket.on('message', (msg, rinfo) => {
    received++;
    bytes += msg.length;
    o.onMessage(msg, (performance.timeOrigin + performance.now()) * 1000, rinfo.address);
  });
  return {
    host: listen.host,
    port: socket.address().port,
    stats: () => ({
      received,
      bytes,
      batches: received,
      kernelDrops: (finalDrops ?? udpKernelDrops(fd)) - dropBase,
      hostRcvbufErrors: observeUdpHost() - hostBase,
      rcvbuf: report.got,
      rcvbufReport: report,
      jsCallsPerDatagram: received ? 1 : 0,
    }),
    resetStats: () => {
      received = 0;
      bytes = 0;
      dropBase = finalDrops ?? udpKernelDrops(fd);
      hostBase = observeUdpHost();
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (finalDrops !== undefined) return resolve();
        finalDrops = udpKernelDrops(fd);
        socket.close(() => resolve());
      }),
  };
}
