// The header every sockbuf datagram carries, so that a receiver counts loss, reordering, duplicates
// and jitter by itself (as iperf3 -u does). Pure. Little-endian, 24 bytes:
//   0 u32 magic   4 u32 flow   8 f64 sequence number   16 f64 send time (µs since the epoch)
// A trailer (magic TRAILER_MAGIC) carries in its sequence field how many data datagrams the flow sent,
// and after the header (u32 at 24, TRAILER_BYTES in all) how many copies of the trailer the flow
// sends, so that a receiver can put the trailers on both sides of its accounting.
// Datagrams shorter than the header carry nothing and are counted as unsequenced.
// This is the one codec of that layout: the blast, the sink and the tests read and write it here. It is
// the benchmark tool's concern: the library's sender (src/udp/sender.ts) sends the caller's payloads as
// they are.

export const HEADER_BYTES = 24;
export const DATA_MAGIC = 0x53425544; // 'SBUD'
export const TRAILER_MAGIC = 0x53425554; // 'SBUT'
/** A trailer: the header and a u32 copy count. */
export const TRAILER_BYTES = 28;

export interface DatagramHeader {
  magic: number;
  flow: number;
  seq: number;
  sendUs: number;
  /** A trailer's copy count (TRAILER_BYTES long trailers only). */
  copies?: number;
}

/** Writes `h` at `offset` (a trailer's copy count too, when given). */
export function writeHeader(view: DataView, offset: number, h: DatagramHeader): void {
  view.setUint32(offset, h.magic, true);
  view.setUint32(offset + 4, h.flow, true);
  view.setFloat64(offset + 8, h.seq, true);
  view.setFloat64(offset + 16, h.sendUs, true);
  if (h.copies !== undefined) view.setUint32(offset + HEADER_BYTES, h.copies, true);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Stamps the data header on `n` datagrams of `size` bytes laid end to end from the start of `buf`:
 * flow `flow`, sequence numbers from `seq`, one send time. Where the layout allows (a little-endian
 * host, `size` a multiple of 8, `buf` 8-byte aligned) through typed arrays, four stores a datagram;
 * otherwise through writeHeader. Either way the bytes are the same (the tests compare them).
 */
export function stampHeaders(
  buf: Buffer,
  n: number,
  size: number,
  flow: number,
  seq: number,
  sendUs: number,
) {
  if (LITTLE_ENDIAN && size % 8 === 0 && buf.byteOffset % 8 === 0) {
    const u32 = new Uint32Array(buf.buffer, buf.byteOffset, (n * size) >> 2);
    const f64 = new Float64Array(buf.buffer, buf.byteOffset, (n * size) >> 3);
    const w4 = size >> 2;
    const w8 = size >> 3;
    for (let j = 0; j < n; j++) {
      u32[j * w4] = DATA_MAGIC;
      u32[j * w4 + 1] = flow;
      f64[j * w8 + 1] = seq + j;
      f64[j * w8 + 2] = sendUs;
    }
    return;
  }
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const h: DatagramHeader = { magic: DATA_MAGIC, flow, seq, sendUs };
  for (let j = 0; j < n; j++) {
    h.seq = seq + j;
    writeHeader(v, j * size, h);
  }
}

/**
 * The header of the datagram at `offset` of `length` bytes, or undefined if it carries none. A hot
 * loop passes `into`, one object it reuses, so that reading allocates nothing.
 */
export function readHeader(
  view: DataView,
  offset: number,
  length: number,
  into?: DatagramHeader,
): DatagramHeader | undefined {
  if (length < HEADER_BYTES) return undefined;
  const magic = view.getUint32(offset, true);
  if (magic !== DATA_MAGIC && magic !== TRAILER_MAGIC) return undefined;
  const h = into ?? { magic, flow: 0, seq: 0, sendUs: 0 };
  h.magic = magic;
  h.flow = view.getUint32(offset + 4, true);
  h.seq = view.getFloat64(offset + 8, true);
  h.sendUs = view.getFloat64(offset + 16, true);
  if (magic === TRAILER_MAGIC && length >= TRAILER_BYTES)
    h.copies = view.getUint32(offset + HEADER_BYTES, true);
  else if (h.copies !== undefined) h.copies = undefined;
  return h;
}

/**
 * The sequence number of the datagram at `offset` (`length` bytes) when it is a data datagram of flow
 * `flow`, or −1 for anything else (a trailer, another flow, no header: read those with readHeader).
 * The sink's hot path: two reads to tell the common case, the third its answer; sendUsAt the fourth.
 */
export function dataSeqAt(view: DataView, offset: number, length: number, flow: number): number {
  if (length < HEADER_BYTES || view.getUint32(offset, true) !== DATA_MAGIC) return -1;
  if (view.getUint32(offset + 4, true) !== flow) return -1;
  return view.getFloat64(offset + 8, true);
}

/** The send time (µs) of the data datagram at `offset`, whose header dataSeqAt read. */
export function sendUsAt(view: DataView, offset: number): number {
  return view.getFloat64(offset + 16, true);
}

/** Wall-clock microseconds, comparable across processes on one host (the receiver's clock too). */
export { nowUs } from '../udp/clock.js';

/**
 * Splits a byte stream of datagrams written back to back (what `nc -u -l` prints) into whole data
 * datagrams of `size` bytes and trailers, by the magic at each one's start. Bytes that do not start
 * with a header (a datagram shorter than it, or a tail cut short) end the walk: `rest` counts them.
 * `dataEnd` is the offset just past the last data datagram.
 */
export function splitDatagramStream(
  bytes: Uint8Array,
  size: number,
): { data: number; trailers: number; rest: number; dataEnd: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let data = 0;
  let trailers = 0;
  let at = 0;
  let dataEnd = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const magic = view.getUint32(at, true);
    const len = magic === TRAILER_MAGIC ? TRAILER_BYTES : magic === DATA_MAGIC ? size : 0;
    if (!len || at + len > bytes.length) break;
    if (magic === TRAILER_MAGIC) trailers++;
    else data++;
    at += len;
    if (magic === DATA_MAGIC) dataEnd = at;
  }
  return { data, trailers, rest: bytes.length - at, dataEnd };
}
