// struct tcp_info (include/uapi/linux/tcp.h) and getsockopt(IPPROTO_TCP, TCP_INFO).
// The kernel copies min(optlen, sizeof its struct), so an older kernel returns a shorter struct:
// a field that ends past the returned length is absent (undefined), never read as zero.
// Offsets as gcc lays out struct tcp_info on x86_64 (aarch64 has the same layout).
import { IPPROTO_TCP, TCP_INFO, TCP_STATES } from './constants.js';
import { getOptionBuffer } from './socket.js';

/** Bytes asked of the kernel: more than any kernel's struct today (280 on 6.18). */
export const TCP_INFO_BUFFER = 512;

/** tcpi_options bits. */
export const TCPI_OPT = {
  TIMESTAMPS: 1,
  SACK: 2,
  WSCALE: 4,
  ECN: 8,
  ECN_SEEN: 16,
  SYN_DATA: 32,
  USEC_TS: 64,
  TFO_CHILD: 128,
} as const;

type Kind = 'u8' | 'u16' | 'u32' | 'u64';
const SIZE: Record<Kind, number> = { u8: 1, u16: 2, u32: 4, u64: 8 };

// [name, offset, kind]; units are the kernel's (see the TcpInfo docs below).
// The 104-byte struct: present in every reply.
const BASE_FIELDS = [
  ['state', 0, 'u8'],
  ['caState', 1, 'u8'],
  ['retransmits', 2, 'u8'],
  ['probes', 3, 'u8'],
  ['backoff', 4, 'u8'],
  ['options', 5, 'u8'],
  ['rto', 8, 'u32'],
  ['ato', 12, 'u32'],
  ['sndMss', 16, 'u32'],
  ['rcvMss', 20, 'u32'],
  ['unacked', 24, 'u32'],
  ['sacked', 28, 'u32'],
  ['lost', 32, 'u32'],
  ['retrans', 36, 'u32'],
  ['fackets', 40, 'u32'],
  ['lastDataSent', 44, 'u32'],
  ['lastAckSent', 48, 'u32'],
  ['lastDataRecv', 52, 'u32'],
  ['lastAckRecv', 56, 'u32'],
  ['pmtu', 60, 'u32'],
  ['rcvSsthresh', 64, 'u32'],
  ['rtt', 68, 'u32'],
  ['rttvar', 72, 'u32'],
  ['sndSsthresh', 76, 'u32'],
  ['sndCwnd', 80, 'u32'],
  ['advmss', 84, 'u32'],
  ['reordering', 88, 'u32'],
  ['rcvRtt', 92, 'u32'],
  ['rcvSpace', 96, 'u32'],
  ['totalRetrans', 100, 'u32'],
] as const satisfies readonly (readonly [string, number, Kind])[];

// Fields later kernels appended; absent from a shorter reply.
const LATER_FIELDS = [
  ['pacingRate', 104, 'u64'],
  ['maxPacingRate', 112, 'u64'],
  ['bytesAcked', 120, 'u64'],
  ['bytesReceived', 128, 'u64'],
  ['segsOut', 136, 'u32'],
  ['segsIn', 140, 'u32'],
  ['notsentBytes', 144, 'u32'],
  ['minRtt', 148, 'u32'],
  ['dataSegsIn', 152, 'u32'],
  ['dataSegsOut', 156, 'u32'],
  ['deliveryRate', 160, 'u64'],
  ['busyTime', 168, 'u64'],
  ['rwndLimited', 176, 'u64'],
  ['sndbufLimited', 184, 'u64'],
  ['delivered', 192, 'u32'],
  ['deliveredCe', 196, 'u32'],
  ['bytesSent', 200, 'u64'],
  ['bytesRetrans', 208, 'u64'],
  ['dsackDups', 216, 'u32'],
  ['reordSeen', 220, 'u32'],
  ['rcvOoopack', 224, 'u32'],
  ['sndWnd', 228, 'u32'],
  ['rcvWnd', 232, 'u32'],
  ['rehash', 236, 'u32'],
  ['totalRto', 240, 'u16'],
  ['totalRtoRecoveries', 242, 'u16'],
  ['totalRtoTime', 244, 'u32'],
] as const satisfies readonly (readonly [string, number, Kind])[];

/** Length of the oldest struct (every Linux since 2.6), ending with tcpi_total_retrans. */
export const TCP_INFO_MIN = 104;

/**
 * The decoded struct. Names are the kernel's without `tcpi_`, in camelCase; units are the kernel's:
 * times in µs (rto, ato, rtt, rttvar, rcvRtt, minRtt, busyTime, rwndLimited, sndbufLimited), the
 * last* fields and totalRtoTime in ms, sndCwnd/sndSsthresh in segments, rates in bytes/s, the
 * rest bytes or counts. 64-bit fields are Numbers (exact up to 2^53; ~0 pacing rate is 2^64).
 * Fields the running kernel does not have are undefined.
 */
export type TcpInfo = { [K in (typeof BASE_FIELDS)[number][0]]: number } & {
  [K in (typeof LATER_FIELDS)[number][0]]?: number;
} & {
  /** The state's name as ss prints it ('established', 'listen' …). */
  stateName: string;
  /** Window scale the peer applies to what we send (low nibble); only when options has WSCALE. */
  sndWscale?: number;
  /** Window scale we apply to what we advertise (high nibble); only when options has WSCALE. */
  rcvWscale?: number;
  deliveryRateAppLimited?: boolean;
  fastopenClientFail?: number;
  /** Bytes the kernel returned. */
  length: number;
};

const FIELDS = [...BASE_FIELDS, ...LATER_FIELDS];
// the table as parallel arrays, in offset order: the decoder's loop reads them by index
const NAMES: string[] = FIELDS.map(([name]) => name);
const OFFSETS: number[] = FIELDS.map(([, off]) => off);
const SIZES: number[] = FIELDS.map(([, , kind]) => SIZE[kind]);

/**
 * Every field of the type, undefined: a decoded struct starts as a copy of it, so each one has the same
 * shape (V8's fast properties: ~0.4 KB a socket, where adding 60 keys one by one made a 2.7 KB
 * dictionary, which an exporter does 10 000 times a scrape).
 */
const TEMPLATE: Record<string, unknown> = {
  length: 0,
  ...Object.fromEntries(NAMES.map((name) => [name, undefined])),
  stateName: '',
  sndWscale: undefined,
  rcvWscale: undefined,
  deliveryRateAppLimited: undefined,
  fastopenClientFail: undefined,
};

/** Decodes the bytes getsockopt(TCP_INFO) returned. Pure. Throws if shorter than TCP_INFO_MIN. */
export function decodeTcpInfo(b: Buffer): TcpInfo {
  if (b.length < TCP_INFO_MIN) throw new RangeError(`tcp_info too short: ${b.length} bytes`);
  const out = { ...TEMPLATE };
  out.length = b.length;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < NAMES.length; i++) {
    const off = OFFSETS[i];
    const size = SIZES[i];
    if (off + size > b.length) break; // fields are in offset order: the rest are missing too
    // u64 from two halves, no BigInt: exact up to 2^53, rounded above as Number(BigInt) would be
    out[NAMES[i]] =
      size === 4
        ? v.getUint32(off, true)
        : size === 8
          ? v.getUint32(off, true) + v.getUint32(off + 4, true) * 2 ** 32
          : size === 1
            ? b[off]
            : v.getUint16(off, true);
  }
  out.stateName = TCP_STATES[b[0]] ?? `state-${b[0]}`;
  if (b[5] & TCPI_OPT.WSCALE) {
    // bitfields tcpi_snd_wscale:4, tcpi_rcv_wscale:4 — little-endian GCC puts the first in the low nibble
    out.sndWscale = b[6] & 0x0f;
    out.rcvWscale = b[6] >> 4;
  }
  out.deliveryRateAppLimited = (b[7] & 1) === 1;
  out.fastopenClientFail = (b[7] >> 1) & 3;
  return out as TcpInfo;
}

/** getsockopt(fd, IPPROTO_TCP, TCP_INFO), decoded. */
export function getTcpInfo(fd: number): TcpInfo {
  return decodeTcpInfo(getOptionBuffer(fd, IPPROTO_TCP, TCP_INFO, TCP_INFO_BUFFER));
}
