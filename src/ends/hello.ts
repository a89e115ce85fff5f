// The TCP test wire format of sink/blast, and the hello that starts a sockbuf connection. Pure.
//
//   connection   = hello data* trailer          (blast → sink; sink → blast when reversed)
//                | plain bytes                  (anything else: nc, a Python socket, `blast --raw`)
//   hello        = MAGIC (8 bytes: 0x89 "SOCKBUF") u32be length, then `length` bytes of JSON (Hello),
//                  length ≤ HELLO_MAX_BYTES
//   data frame   = u32be size, u64be index, u64be offset, size − 16 bytes of pattern (pattern.ts)
//   trailer      = u32be 24, u64be 0xffff_ffff_ffff_ffff, u64be bytes, u64be frames
//
// Hello detection: the sink compares the first bytes of a connection with MAGIC as they arrive. The
// first byte that differs makes the connection a plain stream, and so does a stream that ends before
// eight bytes came; every byte already read counts toward the plain stream. 0x89 is not text and not
// the first byte of any protocol a user points at a sink (TLS 0x16, HTTP letters, zeros), so a plain
// stream is told apart at its first byte. A sink that `serve` started (a far end) takes no plain streams:
// its hello must carry the test's secret, checked before anything is allocated or sent.
//
// Verification: every data frame says its index and the stream offset of its first byte, so a gap, a
// repeat or a reorder is caught wherever it falls; the trailer says how many bytes (whole data frames,
// headers included) and frames were sent, so a stream cut at a frame boundary is caught too. The index
// field of a data frame never reaches 2^64 − 1, which marks the trailer.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { PeerError } from '../errors.js';
import { JsonLimitError, parseBoundedJson } from '../policy/json.js';
import { FRAME_HEADER_BYTES } from '../tcp/frame.js';

/** The first bytes of every sockbuf test connection. */
export const MAGIC = Buffer.from([0x89, 0x53, 0x4f, 0x43, 0x4b, 0x42, 0x55, 0x46]); // 0x89 "SOCKBUF"
/** A hello larger than this is not a hello: the sink closes the connection. */
export const HELLO_MAX_BYTES = 4096;
/** Index and offset at the start of every data frame's payload: frames carry at least this much. */
export const FRAME_INDEX_BYTES = 16;
export const TRAILER_PAYLOAD_BYTES = 24;

export interface Hello {
  sockbuf: 1;
  /** Streams of one blast run share a test id; `sink --once` exits when all of them ended. */
  test: string;
  stream: number;
  streams: number;
  /** The sink sends, the blast receives. */
  reverse: boolean;
  /** Frame payload size. */
  size: number;
  /** Reverse only: what the sink sends (stream bytes) or for how long. */
  bytes?: number;
  seconds?: number;
  /** Reverse only: the sink pins its send buffer to this (bytes), before it sends. */
  sndbuf?: number;
  /** The far end's secret of this test (from `serve`'s ready reply); a sink with a secret requires it. */
  secret?: string;
  /** The connection is bench ping's: every frame after the hello is echoed. */
  echo?: boolean;
}

/** The hello as it goes on the wire: MAGIC, u32be length, JSON. */
export function encodeHello(h: Hello): Buffer {
  const json = Buffer.from(JSON.stringify(h));
  const out = Buffer.allocUnsafe(MAGIC.length + FRAME_HEADER_BYTES + json.length);
  MAGIC.copy(out, 0);
  out.writeUInt32BE(json.length, MAGIC.length);
  json.copy(out, MAGIC.length + FRAME_HEADER_BYTES);
  return out;
}

/** Parses a hello's JSON payload; throws a PeerError saying what is wrong. */
export function parseHello(payload: Uint8Array): Hello {
  let v: unknown;
  try {
    v = parseBoundedJson(Buffer.from(payload.buffer, payload.byteOffset, payload.length).toString('utf8'));
  } catch (err) {
    if (err instanceof JsonLimitError)
      throw new PeerError(`not a sockbuf hello (${err.message})`, { cause: err });
    throw new PeerError('not a sockbuf hello (not JSON)', { cause: err });
  }
  const h = v as Partial<Hello>;
  const count = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (
    !h ||
    typeof h !== 'object' ||
    h.sockbuf !== 1 ||
    typeof h.test !== 'string' ||
    !count(h.stream) ||
    !count(h.streams) ||
    typeof h.reverse !== 'boolean' ||
    !count(h.size) ||
    (h.size as number) > 0xffffffff ||
    (h.bytes !== undefined && !count(h.bytes)) ||
    (h.seconds !== undefined && !(typeof h.seconds === 'number' && h.seconds > 0)) ||
    (h.sndbuf !== undefined && !count(h.sndbuf)) ||
    (h.secret !== undefined && typeof h.secret !== 'string') ||
    (h.echo !== undefined && typeof h.echo !== 'boolean')
  )
    throw new PeerError('not a sockbuf hello (bad fields)');
  return h as Hello;
}

export type Detected =
  | { kind: 'more' }
  /** `held`: the bytes of earlier chunks that were held while they looked like the magic (a copy). */
  | { kind: 'plain'; held: Buffer }
  /** `rest`: the bytes of this chunk after the hello (a view). */
  | { kind: 'hello'; hello: Hello; rest: Uint8Array }
  | { kind: 'bad'; reason: string };

/**
 * Tells a sockbuf hello from a plain stream, chunk by chunk. Holds at most MAGIC + 4 + HELLO_MAX_BYTES
 * bytes. After 'plain', 'hello' or 'bad' it is done and must not be pushed to again.
 */
export class HelloDetector {
  private have = 0;
  private readonly head = Buffer.alloc(MAGIC.length + FRAME_HEADER_BYTES);
  private body: Buffer | null = null;
  private bodyHave = 0;

  push(chunk: Uint8Array): Detected {
    let off = 0;
    const before = this.have;
    // the magic and the length
    while (this.have < this.head.length && off < chunk.length) {
      const b = chunk[off++];
      if (this.have < MAGIC.length && b !== MAGIC[this.have])
        return { kind: 'plain', held: Buffer.from(this.head.subarray(0, before)) };
      this.head[this.have++] = b;
    }
    if (this.have < this.head.length) return { kind: 'more' };
    if (this.body === null) {
      const len = this.head.readUInt32BE(MAGIC.length);
      if (len > HELLO_MAX_BYTES)
        return { kind: 'bad', reason: `a hello of ${len} bytes (at most ${HELLO_MAX_BYTES})` };
      this.body = Buffer.allocUnsafe(len);
    }
    const n = Math.min(this.body.length - this.bodyHave, chunk.length - off);
    this.body.set(chunk.subarray(off, off + n), this.bodyHave);
    this.bodyHave += n;
    off += n;
    if (this.bodyHave < this.body.length) return { kind: 'more' };
    try {
      return { kind: 'hello', hello: parseHello(this.body), rest: chunk.subarray(off) };
    } catch (err) {
      return { kind: 'bad', reason: (err as Error).message };
    }
  }

  /** The stream ended here: what was held is a plain stream (or a cut hello, if the magic was whole). */
  end(): Detected {
    return this.have < MAGIC.length
      ? { kind: 'plain', held: Buffer.from(this.head.subarray(0, this.have)) }
      : { kind: 'bad', reason: 'the hello was cut short' };
  }
}

/** A fresh per-test secret (what `serve` hands the client and the far end). */
export function newSecret(): string {
  return randomBytes(16).toString('hex');
}

/** Constant-time comparison of secrets (both hashed first, so lengths never leak either). */
export function secretMatches(expected: string, got: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(expected), h(got));
}
