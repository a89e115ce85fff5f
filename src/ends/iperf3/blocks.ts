// A reverse test's sender: zeros in whole blocks of iperf3's `len`, as iperf3's server writes them.
// Stopping on a block boundary is not enough for iperf3's client (its non-blocking reads were partial,
// so its blocks straddle ours): the server ends each stream with a FIN at TEST_END (iperf3-sink.ts).
import type net from 'node:net';
import { WRITE_BYTES } from '../pump.js';

/** Writes in one event-loop turn before the sender lets other I/O (the control connection) run. */
const WRITES_PER_TURN = 16;

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
      // A fast reader keeps write() returning true, and a loop that never yields would hold off the
      // control connection's TEST_END (the sink then sent ~100 ms past the test on loopback)
      for (let n = 0; n < WRITES_PER_TURN; n++) {
        if (limit.stop || limit.left <= 0 || socket.destroyed) return resolve();
        limit.left -= chunk.length;
        progress.bytes += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', write);
          return;
        }
      }
      setImmediate(write);
    };
    socket.once('close', () => resolve());
    write();
  });
}
