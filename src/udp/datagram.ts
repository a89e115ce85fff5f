// The header every sockbuf datagram carries, so that a receiver counts loss, reordering, duplicates
// and jitter by itself (as iperf3 -u does). Pure. Little-endian, 24 bytes:
//   0 u32 magic   4 u32 flow   8 f64 sequence number   16 f64 send time (µs since the epoch)
// A trailer (magic TRAILER_MAGIC) carries in its sequence field how many data datagrams the flow sent,
// and after the header (u32 at 24, TRAILER_BYTES in all) how many copies of the trailer the flow
// sends, so that a receiver can put the trailers on both sides of its accounting.
// Datagrams shorter than the header carry nothing and are counted as unsequenced.

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
}

export function writeHeader(view: DataView, offset: number, h: DatagramHeader): void {
  view.setUint32(offset, h.magic, true);
  view.setUint32(offset + 4, h.flow, true);
  view.setFloat64(offset + 8, h.seq, true);
  view.setFloat64(offset + 16, h.sendUs, true);
}

/** The header of the datagram at `offset` of `length` bytes, or undefined if it carries none. */
export function readHeader(view: DataView, offset: number, length: number): DatagramHeader | undefined {
  if (length < HEADER_BYTES) return undefined;
  const magic = view.getUint32(offset, true);
  if (magic !== DATA_MAGIC && magic !== TRAILER_MAGIC) return undefined;
  return {
    magic,
    flow: view.getUint32(offset + 4, true),
    seq: view.getFloat64(offset + 8, true),
    sendUs: view.getFloat64(offset + 16, true),
  };
}

/** Wall-clock microseconds, comparable across processes on one host. */
export function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}
