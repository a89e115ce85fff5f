// Reading a file bounded by what was read, not by what stat said: a pipe, a FIFO, /dev/zero or
// /dev/stdin report size 0 (or anything) and may never end, and a /proc file reports 0 whatever it
// holds. The reader stops once it has read one byte past the limit and says so (issue 44: `report
// /dev/zero` reached 9.1 GB RSS when the cap was stat's size only).
import { closeSync, openSync, readSync } from 'node:fs';
import { SockbufError } from './sockbuf-error.js';

/**
 * The first chunk: 16 KiB (a /proc file or a sysctl fits); each next one twice the last, up to CHUNK,
 * 1 MiB (a long input in few calls, without allocating a megabyte to read a page).
 */
const FIRST = 16 << 10;
const CHUNK = 1 << 20;

/** A file, pipe or device that held more than the limit: reading stopped there. `.limit` in bytes. */
export class InputLimitError extends SockbufError {
  declare readonly code: 'ERR_SOCKBUF_INPUT_LIMIT';
  /** The most the reader took, in bytes. */
  readonly limit: number;

  /** `what` names the input (a file name); `limit` is the cap it went past. */
  constructor(what: string, limit: number) {
    super(`${what}: more than ${limit} bytes (reading stopped there)`, 'ERR_SOCKBUF_INPUT_LIMIT');
    this.name = 'InputLimitError';
    this.limit = limit;
  }
}

/**
 * The bytes of `file` (a path, or an open fd, which is left open), read until its end or until one
 * byte more than `maxBytes`, which throws InputLimitError; memory held is at most `maxBytes` plus one
 * chunk. A failure to open or read throws the fs error (ENOENT, EACCES, EISDIR …).
 */
export function readBounded(file: string | number, maxBytes: number, name = String(file)): Buffer {
  const fd = typeof file === 'number' ? file : openSync(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    // each chunk is filled before the next is made (a pipe gives 64 KiB a read, /proc a page): what is
    // held is what was read plus at most one chunk
    let chunk = Buffer.allocUnsafe(Math.min(FIRST, maxBytes + 1));
    let used = 0;
    for (;;) {
      // one byte past the limit is enough to know the input is too long
      const want = Math.min(chunk.length - used, maxBytes + 1 - total);
      let n: number;
      try {
        n = readSync(fd, chunk, used, want, null);
      } catch (err) {
        // a non-blocking descriptor (a pipe another program set so) with nothing in it yet: wait
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        throw err;
      }
      if (n === 0) break;
      used += n;
      total += n;
      if (total > maxBytes) throw new InputLimitError(name, maxBytes);
      if (used === chunk.length) {
        chunks.push(chunk);
        chunk = Buffer.allocUnsafe(Math.min(chunk.length * 2, CHUNK, maxBytes + 1 - total));
        used = 0;
      }
    }
    if (used) chunks.push(chunk.subarray(0, used));
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  } finally {
    if (typeof file !== 'number') closeSync(fd);
  }
}

/** readBounded as UTF-8 text. */
export function readBoundedText(file: string | number, maxBytes: number, name?: string): string {
  return readBounded(file, maxBytes, name).toString('utf8');
}
