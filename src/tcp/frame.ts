// Length-prefixed frames: a u32 big-endian payload length, then the payload. Pure: no socket.
//
// The decoder is a small state machine in the manner of ws's receiver (header → payload). A frame that
// lies wholly inside one read is handed over as a view of that read (valid only during the call, like
// the read itself); only a frame that spans reads is copied, into a buffer of exactly its size. The
// claimed length is checked against `maxFrame` before anything of that size is allocated.
import { SockbufError, UsageError } from '../errors.js';
import { checkBytes, checkFunction } from '../policy/shape.js';
import { shown } from '../policy/shown.js';

export const FRAME_HEADER_BYTES = 4;
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
/**
 * A frame that spans reads starts in a buffer of at most this size, doubled as its bytes arrive: a
 * peer that claims 16 MiB and sends 10 bytes costs 64 KiB, not 16 MiB (found by the fuzzer).
 */
const FIRST_BODY_BYTES = 64 * 1024;

/** A frame the decoder refuses: longer than its maximum. */
export class FrameError extends SockbufError {
  /** A frame that claimed `length` bytes, over `maxFrame`. */
  constructor(
    readonly length: number,
    readonly maxFrame: number,
  ) {
    super(`frame length ${length} exceeds the maximum frame size ${maxFrame}`, 'ERR_SOCKBUF_FRAME_TOO_BIG');
    this.name = 'FrameError';
  }
}

/** Called with each payload; return `false` to stop decoding after this frame (returning nothing goes on). */
export type FrameHandler = (payload: Uint8Array) => unknown;

function readU32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

/** Splits a byte stream into length-prefixed frames, and hands each to a handler. */
export class FrameDecoder {
  readonly maxFrame: number;
  frames = 0;
  /** Frames that spanned reads and had to be copied. */
  copied = 0;
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  private headerHave = 0;
  private body: Uint8Array | null = null;
  private bodyHave = 0;
  /** The frame's claimed length; the body buffer grows toward it as bytes arrive, never ahead. */
  private bodyLength = 0;

  /** `onFrame` gets each whole frame; a frame longer than `maxFrame` bytes throws a FrameError. */
  constructor(
    private readonly onFrame: FrameHandler,
    maxFrame = DEFAULT_MAX_FRAME_BYTES,
  ) {
    checkFunction(onFrame, 'onFrame');
    if (!Number.isSafeInteger(maxFrame) || maxFrame < 0 || maxFrame > 0xffffffff)
      throw UsageError.invalid('maxFrame', shown(maxFrame), 'a size from 0 to 4294967295 bytes');
    this.maxFrame = maxFrame;
  }

  /** True between the first byte of a frame and its last (a stream that ends here was cut). */
  get partial(): boolean {
    return this.headerHave > 0 || this.body !== null;
  }

  /**
   * Decodes `chunk`. Returns how many bytes were consumed: all of them, unless the handler asked to stop.
   * Throws FrameError on an oversize length prefix (the decoder is then unusable).
   */
  push(chunk: Uint8Array): number {
    const end = chunk.length;
    let off = 0;
    while (off < end) {
      if (this.body !== null) {
        const n = Math.min(this.bodyLength - this.bodyHave, end - off);
        const body = this.room(this.bodyHave + n);
        body.set(chunk.subarray(off, off + n), this.bodyHave);
        this.bodyHave += n;
        off += n;
        if (this.bodyHave < this.bodyLength) break;
        this.body = null;
        this.copied++;
        if (this.emit(body) === false) return off;
      } else if (this.headerHave > 0 || end - off < FRAME_HEADER_BYTES) {
        const n = Math.min(FRAME_HEADER_BYTES - this.headerHave, end - off);
        this.header.set(chunk.subarray(off, off + n), this.headerHave);
        this.headerHave += n;
        off += n;
        if (this.headerHave < FRAME_HEADER_BYTES) break;
        this.headerHave = 0;
        const len = this.check(readU32(this.header, 0));
        if (len <= end - off) {
          // the payload is all in this chunk after a split header
          const payload = chunk.subarray(off, off + len);
          off += len;
          if (this.emit(payload) === false) return off;
        } else {
          this.startBody(len);
        }
      } else {
        const len = this.check(readU32(chunk, off));
        off += FRAME_HEADER_BYTES;
        if (len <= end - off) {
          const payload = chunk.subarray(off, off + len);
          off += len;
          if (this.emit(payload) === false) return off;
        } else if (off === end) {
          // the read ended right after the header: keep the header, the payload may come in one piece
          this.header.set(chunk.subarray(off - FRAME_HEADER_BYTES, off));
          this.headerHave = FRAME_HEADER_BYTES;
        } else {
          this.startBody(len);
        }
      }
    }
    return off;
  }

  private startBody(len: number): void {
    this.bodyLength = len;
    this.bodyHave = 0;
    this.body = new Uint8Array(Math.min(len, FIRST_BODY_BYTES));
  }

  /** The body buffer with room for `need` bytes: doubled (at most to the claimed length) when short. */
  private room(need: number): Uint8Array {
    const body = this.body as Uint8Array;
    if (need <= body.length) return body;
    const grown = new Uint8Array(Math.min(this.bodyLength, Math.max(need, body.length * 2)));
    grown.set(body.subarray(0, this.bodyHave));
    this.body = grown;
    return grown;
  }

  private check(len: number): number {
    if (len > this.maxFrame) throw new FrameError(len, this.maxFrame);
    return len;
  }

  private emit(payload: Uint8Array): unknown {
    this.frames++;
    return this.onFrame(payload);
  }
}

/** The 4-byte header for a payload of `length` bytes. */
export function frameHeader(length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0 || length > 0xffffffff)
    throw UsageError.invalid('length', shown(length), 'a frame length from 0 to 4294967295 bytes');
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32BE(length, 0);
  return h;
}

/** One frame as a single buffer (header + a copy of the payload). */
export function encodeFrame(payload: Uint8Array): Buffer {
  checkBytes(payload, 'payload');
  if (payload.length > 0xffffffff)
    throw UsageError.invalid('payload', `${payload.length} bytes`, 'at most 4294967295 bytes');
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}
