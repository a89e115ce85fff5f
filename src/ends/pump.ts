// Writes a source into a socket as fast as it takes it, for a number of bytes or for a time, ending on
// a frame boundary: blast's pattern (src/ends/pattern.ts), a raw blast's zeros, a reverse sink's stream.
import type net from 'node:net';
import { PeerError } from '../errors.js';

/** Bytes handed to one socket.write. */
export const WRITE_BYTES = 256 * 1024;

export interface PumpLimit {
  /** Stop after this many stream bytes (rounded up to whole frames). */
  bytes?: number;
  /** Stop after this many seconds (then finish the frame in progress). */
  seconds?: number;
  /** Shared with other streams (a far end's cap): each write takes from it; at 0 the pump stops. */
  budget?: { left: number };
}

/** What pump sends: the pattern's frames, or raw bytes. */
export interface StreamSource {
  readonly frameBytes: number;
  toFrameEnd(): number;
  next(max: number): Buffer;
}

/** `blast --raw`: zeros, no hello, no framing (a "frame" is one byte, so any count can be sent). */
export class ZeroSource implements StreamSource {
  readonly frameBytes = 1;
  private static readonly zeros = Buffer.alloc(WRITE_BYTES);
  toFrameEnd(): number {
    return 1;
  }
  next(max: number): Buffer {
    return ZeroSource.zeros.subarray(0, Math.min(max, WRITE_BYTES));
  }
}

/** Writes the source into `socket` until the limit; resolves with the bytes written (whole frames). */
export function pump(
  socket: net.Socket,
  source: StreamSource,
  limit: PumpLimit,
  progress: { bytes: number } = { bytes: 0 },
): Promise<number> {
  const total =
    limit.bytes === undefined
      ? Number.POSITIVE_INFINITY
      : Math.ceil(limit.bytes / source.frameBytes) * source.frameBytes;
  const deadline =
    limit.seconds === undefined ? Number.POSITIVE_INFINITY : performance.now() + limit.seconds * 1000;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let ending = false;
    const onError = (err: Error) => {
      socket.off('drain', write);
      reject(err);
    };
    const onClose = () => onError(new PeerError('the peer closed the connection before the transfer ended'));
    const done = () => {
      socket.off('error', onError);
      socket.off('close', onClose);
      resolve(sent);
    };
    // corked, so a frame's header and payload leave in one writev
    function write(): void {
      socket.cork();
      for (;;) {
        if (!ending && performance.now() >= deadline) ending = true;
        let max = Math.min(WRITE_BYTES, total - sent);
        if (ending) {
          const rest = source.toFrameEnd();
          if (rest === source.frameBytes) max = 0;
          else max = Math.min(max, rest);
        }
        // a cap stops the stream where it is, even mid-frame (the test is cut, not ended)
        if (limit.budget) max = Math.min(max, limit.budget.left);
        if (max <= 0) {
          socket.uncork();
          done();
          return;
        }
        const piece = source.next(max);
        sent += piece.length;
        if (limit.budget) limit.budget.left -= piece.length;
        progress.bytes = sent;
        if (!socket.write(piece) && source.toFrameEnd() === source.frameBytes) {
          socket.uncork();
          socket.once('drain', write);
          return;
        }
      }
    }
    socket.once('error', onError);
    socket.once('close', onClose);
    write();
  });
}
