// The verifiable byte stream that `blast tcp` sends and `sink tcp --verify` checks. Pure: no socket.
// The wire format is described in hello.ts.
//
// The stream is a run of frames (u32 length + payload, src/tcp/frame.ts) of `size` payload bytes each.
// A frame's payload starts with its index n and the stream offset of the frame (u64be each); byte i
// after that (i ≥ 16) is (n + i) & 0xff. A dropped, repeated or misplaced frame breaks the index, a
// byte changed anywhere breaks the pattern, and the trailer (hello.ts) says what was sent, so the
// end of the stream is checked too. The source hands out buffers it never writes again (safe to pass
// to socket.write without copying): a large frame is a 20-byte header of its own plus views of a table
// built once; small frames are copied, a batch at a time, from a prebuilt cycle and given their index.
import { FRAME_HEADER_BYTES, frameHeader } from '../tcp/frame.js';
import { FRAME_INDEX_BYTES, TRAILER_PAYLOAD_BYTES } from './hello.js';

const TWO32 = 2 ** 32;
/** The index field of the trailer: no data frame's index reaches it. */
const TRAILER_MARK = 0xffffffff;

/** The pattern table: P[j] = j & 0xff, long enough for any frame of `size` bytes starting at 0..255. */
function table(size: number): Buffer {
  const t = Buffer.allocUnsafe(size + 256);
  for (let j = 0; j < 256 && j < t.length; j++) t[j] = j;
  for (let filled = Math.min(256, t.length); filled < t.length; filled *= 2)
    t.copy(t, filled, 0, Math.min(filled, t.length - filled));
  return t;
}

function writeU64(b: Buffer, v: number, at: number): void {
  b.writeUInt32BE(Math.floor(v / TWO32), at);
  b.writeUInt32BE(v >>> 0, at + 4);
}

function readU64(b: Uint8Array, at: number): number {
  const hi = ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
  const lo = ((b[at + 4] << 24) | (b[at + 5] << 16) | (b[at + 6] << 8) | b[at + 7]) >>> 0;
  return hi * TWO32 + lo;
}

/** The trailer frame (header included): the stream bytes and frames sent before it. */
export function encodeTrailer(bytes: number, frames: number): Buffer {
  const t = Buffer.allocUnsafe(FRAME_HEADER_BYTES + TRAILER_PAYLOAD_BYTES);
  t.writeUInt32BE(TRAILER_PAYLOAD_BYTES, 0);
  t.writeUInt32BE(TRAILER_MARK, 4);
  t.writeUInt32BE(TRAILER_MARK, 8);
  writeU64(t, bytes, 12);
  writeU64(t, frames, 20);
  return t;
}

/** Frames up to this size are copied from a prebuilt cycle of 256 whole frames, a batch per write. */
const SMALL_FRAME = 64 * 1024;

export class PatternSource {
  readonly size: number;
  readonly frameBytes: number;
  /** Small frames: 256 whole frames with their pattern, index fields to be filled in. */
  private readonly cycle: Buffer | null;
  /** Large frames: the pattern table. */
  private readonly table: Buffer | null;
  /** What is being handed out: whole small frames, or a large frame's header. */
  private cur: Buffer = Buffer.alloc(0);
  private curPos = 0;
  /** Large frames: position in the current frame. */
  private pos = 0;
  /** The index of the next frame to be built. */
  private frame = 0;

  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size < FRAME_INDEX_BYTES || size > 0xffffffff)
      throw new RangeError(
        `pattern frame size ${size} is not from ${FRAME_INDEX_BYTES} (the frame index) to 4294967295`,
      );
    this.size = size;
    this.frameBytes = size + FRAME_HEADER_BYTES;
    const header = frameHeader(size);
    if (size <= SMALL_FRAME) {
      const t = table(size);
      const c = Buffer.allocUnsafe(256 * this.frameBytes);
      for (let n = 0; n < 256; n++) {
        const at = n * this.frameBytes;
        header.copy(c, at);
        t.copy(c, at + FRAME_HEADER_BYTES, n, n + size);
      }
      this.cycle = c;
      this.table = null;
    } else {
      this.cycle = null;
      this.table = table(size);
    }
  }

  /** Data frames built so far (all of them sent once the stream stands at a frame boundary). */
  get frames(): number {
    return this.frame;
  }

  /** Bytes from here to the end of the current frame (frameBytes at a frame boundary). */
  toFrameEnd(): number {
    if (this.cycle !== null) {
      const into = this.curPos < this.cur.length ? this.curPos % this.frameBytes : 0;
      return this.frameBytes - into;
    }
    return this.frameBytes - this.pos;
  }

  /** The next piece of the stream, at most `max` bytes (never modified afterwards). */
  next(max: number): Buffer {
    return this.cycle !== null ? this.nextSmall(max) : this.nextLarge(max);
  }

  private nextSmall(max: number): Buffer {
    if (this.curPos >= this.cur.length) this.build(Math.max(1, Math.floor(max / this.frameBytes)));
    const v = this.cur.subarray(this.curPos, Math.min(this.cur.length, this.curPos + max));
    this.curPos += v.length;
    return v;
  }

  /** Copies k frames from the cycle into a fresh buffer and gives each its index and offset. */
  private build(k: number): void {
    const fb = this.frameBytes;
    const cycle = this.cycle as Buffer;
    const out = Buffer.allocUnsafe(k * fb);
    let done = 0;
    while (done < k) {
      const c = (this.frame + done) & 0xff;
      const n = Math.min(k - done, 256 - c);
      cycle.copy(out, done * fb, c * fb, (c + n) * fb);
      done += n;
    }
    for (let i = 0; i < k; i++) {
      const n = this.frame + i;
      writeU64(out, n, i * fb + FRAME_HEADER_BYTES);
      writeU64(out, n * fb, i * fb + FRAME_HEADER_BYTES + 8);
    }
    this.frame += k;
    this.cur = out;
    this.curPos = 0;
  }

  private nextLarge(max: number): Buffer {
    const head = FRAME_HEADER_BYTES + FRAME_INDEX_BYTES;
    if (this.pos === 0) {
      const h = Buffer.allocUnsafe(head);
      h.writeUInt32BE(this.size, 0);
      writeU64(h, this.frame, 4);
      writeU64(h, this.frame * this.frameBytes, 12);
      this.cur = h;
    }
    if (this.pos < head) {
      const v = this.cur.subarray(this.pos, Math.min(head, this.pos + max));
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

/** Checks the frames of one stream against the pattern, in order, and the stream's end against its trailer. */
export class PatternVerifier {
  /** Data frames received. */
  frames = 0;
  /** Frames out of place (index or offset not the next one), of the wrong size, or whose pattern differs. */
  mismatches = 0;
  /** Payload bytes of the data frames received. */
  bytes = 0;
  /** What the trailer said was sent, once it came. */
  trailer?: { bytes: number; frames: number };
  private expected = 0;
  private table: Buffer;
  private readonly frameBytes: number;

  constructor(readonly size: number) {
    this.frameBytes = size + FRAME_HEADER_BYTES;
    this.table = table(Math.min(size, SMALL_FRAME));
  }

  check(payload: Uint8Array): boolean {
    const len = payload.length;
    if (len === TRAILER_PAYLOAD_BYTES && readU64(payload, 0) === TRAILER_MARK * TWO32 + TRAILER_MARK) {
      if (this.trailer) this.mismatches++;
      this.trailer = { bytes: readU64(payload, 8), frames: readU64(payload, 16) };
      return true;
    }
    this.frames++;
    this.bytes += len;
    const n = this.expected;
    if (this.trailer || len !== this.size || len < FRAME_INDEX_BYTES) {
      this.expected++;
      this.mismatches++;
      return false;
    }
    const idx = readU64(payload, 0);
    this.expected = idx + 1; // a gap or a repeat is one mismatch, and the frames after it are checked again
    if (idx !== n || readU64(payload, 8) !== idx * this.frameBytes) {
      this.mismatches++;
      return false;
    }
    if (this.table.length < len + 256) this.table = table(Math.max(len, this.table.length * 2));
    const k = idx & 0xff;
    const ok = this.table
      .subarray(k + FRAME_INDEX_BYTES, k + len)
      .equals(payload.subarray(FRAME_INDEX_BYTES));
    if (!ok) this.mismatches++;
    return ok;
  }

  /** At the end of the stream: undefined when it ended as the trailer says, else what is wrong. */
  finish(): string | undefined {
    const t = this.trailer;
    if (!t) return `the stream ended without a trailer after ${this.frames} frames (cut short)`;
    if (t.frames !== this.frames || t.bytes !== this.frames * this.frameBytes)
      return `the sender sent ${t.frames} frames (${t.bytes} bytes), ${this.frames} arrived (${this.frames * this.frameBytes} bytes)`;
    return undefined;
  }
}
