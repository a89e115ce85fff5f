// The verifiable byte stream that `blast tcp` sends and `sink tcp --verify` checks. Pure: no socket.
//
// The stream is a run of frames (u32 length + payload, src/tcp/frame.ts) of `size` payload bytes each;
// byte i of frame n's payload is (n + i) & 0xff. A dropped, repeated or misplaced byte anywhere breaks
// either the framing or the pattern. The source hands out views of buffers built once and never
// written again (safe to pass to socket.write without copying); the verifier compares each frame with
// memcmp against a view of the same table.
import { FRAME_HEADER_BYTES, frameHeader } from '../tcp/frame.js';

/** The pattern table: P[j] = j & 0xff, long enough for any frame of `size` bytes starting at 0..255. */
function table(size: number): Buffer {
  const t = Buffer.allocUnsafe(size + 256);
  for (let j = 0; j < 256 && j < t.length; j++) t[j] = j;
  for (let filled = Math.min(256, t.length); filled < t.length; filled *= 2)
    t.copy(t, filled, 0, Math.min(filled, t.length - filled));
  return t;
}

/** Frames up to this size are sent from a prebuilt cycle of 256 whole frames (fewer, larger writes). */
const CYCLE_MAX_FRAME = 64 * 1024;

export class PatternSource {
  readonly size: number;
  readonly frameBytes: number;
  private readonly cycle: Buffer | null;
  private readonly table: Buffer | null;
  private readonly header: Buffer;
  private pos = 0;
  private frame = 0;

  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size < 0 || size > 0xffffffff)
      throw new RangeError(`pattern frame size ${size} does not fit in a u32`);
    this.size = size;
    this.frameBytes = size + FRAME_HEADER_BYTES;
    this.header = frameHeader(size);
    if (size <= CYCLE_MAX_FRAME) {
      const t = table(size);
      const c = Buffer.allocUnsafe(256 * this.frameBytes);
      for (let n = 0; n < 256; n++) {
        const at = n * this.frameBytes;
        this.header.copy(c, at);
        t.copy(c, at + FRAME_HEADER_BYTES, n, n + size);
      }
      this.cycle = c;
      this.table = null;
    } else {
      this.cycle = null;
      this.table = table(size);
    }
  }

  /** Bytes from here to the end of the current frame (frameBytes at a frame boundary). */
  toFrameEnd(): number {
    const into = this.cycle !== null ? this.pos % this.frameBytes : this.pos;
    return this.frameBytes - into;
  }

  /** The next piece of the stream, at most `max` bytes (a view; never modified afterwards). */
  next(max: number): Buffer {
    if (this.cycle !== null) {
      const end = Math.min(this.pos + max, this.cycle.length);
      const v = this.cycle.subarray(this.pos, end);
      this.pos = end === this.cycle.length ? 0 : end;
      return v;
    }
    // large frames: the header, then the payload in pieces
    if (this.pos < FRAME_HEADER_BYTES) {
      const v = this.header.subarray(this.pos, Math.min(FRAME_HEADER_BYTES, this.pos + max));
      this.pos += v.length;
      return v;
    }
    const t = this.table as Buffer;
    const start = (this.frame & 0xff) + this.pos - FRAME_HEADER_BYTES;
    const n = Math.min(max, this.frameBytes - this.pos);
    this.pos += n;
    if (this.pos === this.frameBytes) {
      this.pos = 0;
      this.frame++;
    }
    return t.subarray(start, start + n);
  }
}

/** Checks frames against the pattern, in order. */
export class PatternVerifier {
  frames = 0;
  /** Frames whose payload differs from the pattern. */
  mismatches = 0;
  bytes = 0;
  private table = table(0);

  check(payload: Uint8Array): boolean {
    const len = payload.length;
    if (this.table.length < len + 256) this.table = table(Math.max(len, this.table.length * 2));
    const k = this.frames & 0xff;
    this.frames++;
    this.bytes += len;
    const ok = this.table.subarray(k, k + len).equals(payload);
    if (!ok) this.mismatches++;
    return ok;
  }
}
