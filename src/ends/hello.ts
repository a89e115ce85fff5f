// The first frame of every blast connection: what the blast wants of the sink. Pure.

import { JsonLimitError, parseBoundedJson } from '../policy/json.js';
import { encodeFrame } from '../tcp/frame.js';

/** A hello larger than this is not a hello: the sink closes the connection. */
export const HELLO_MAX_BYTES = 4096;

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
}

export function encodeHello(h: Hello): Buffer {
  return encodeFrame(Buffer.from(JSON.stringify(h)));
}

/** Parses a hello frame; throws an Error saying what is wrong. */
export function parseHello(payload: Uint8Array): Hello {
  let v: unknown;
  try {
    v = parseBoundedJson(Buffer.from(payload.buffer, payload.byteOffset, payload.length).toString('utf8'));
  } catch (err) {
    if (err instanceof JsonLimitError)
      throw new Error(`the first frame is not a sockbuf hello (${err.message})`);
    throw new Error('the first frame is not a sockbuf hello (not JSON)');
  }
  const h = v as Partial<Hello>;
  const count = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (
    !h ||
    h.sockbuf !== 1 ||
    typeof h.test !== 'string' ||
    !count(h.stream) ||
    !count(h.streams) ||
    typeof h.reverse !== 'boolean' ||
    !count(h.size) ||
    (h.size as number) > 0xffffffff ||
    (h.bytes !== undefined && !count(h.bytes)) ||
    (h.seconds !== undefined && !(typeof h.seconds === 'number' && h.seconds > 0)) ||
    (h.sndbuf !== undefined && !count(h.sndbuf))
  )
    throw new Error('the first frame is not a sockbuf hello (bad fields)');
  return h as Hello;
}
