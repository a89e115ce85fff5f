// A reverse test's sender: zeros in whole blocks of iperf3's `len`. iperf3's client turns its data
// sockets blocking at TEST_END and reads each block in full (Nread), so a stream that stopped mid-block
// would leave it waiting for the rest; this sender stops only at a block boundary.
import type net from 'node:net';
import { WRITE_BYTES } from '../tcp-source.js';

/** Shared by a test's streams: `stop` ends every sender at its next write; `left` caps the bytes (-n). */
export interface BlockLimit {
  stop: boolean;
  left: number;
}

/** Writes zeros in whole `len` blocks until the limit; `progress.bytes` counts what was handed to the socket. */
export function sendBlocks(
  socket: net.Socket,
  len: number,
  limit: BlockLimit,
  progress: { bytes: number },
): Promise<void> {
  const chunk = Buffer.alloc(len * Math.max(1, Math.floor(WRITE_BYTES / len)));
  return new Promise((resolve) => {
    const write = () => {
      while (!limit.stop && limit.left > 0 && !socket.destroyed) {
        limit.left -= chunk.length;
        progress.bytes += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', write);
          return;
        }
      }
      resolve();
    };
    socket.once('close', () => resolve());
    write();
  });
}
