// iperf3's control protocol, the pure part (esnet/iperf
// src/iperf_api.h, iperf_api.c send_parameters/get_parameters, send_results/get_results): the cookie,
// the state bytes, the length-prefixed JSON, the stream ids, and the parameter and result documents a
// 3.12 peer sends and expects. No socket here: control.ts moves these bytes, iperf3-blast.ts and iperf3-sink.ts
// run the test.
import { randomInt } from 'node:crypto';
import { PeerError } from '../../errors.js';

/** The cookie: 36 characters and a NUL, written first on the control and on every data connection. */
export const COOKIE_BYTES = 37;
const COOKIE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** State bytes (signed char), iperf_api.h. */
export const State = {
  TEST_START: 1,
  TEST_RUNNING: 2,
  TEST_END: 4,
  PARAM_EXCHANGE: 9,
  CREATE_STREAMS: 10,
  SERVER_TERMINATE: 11,
  CLIENT_TERMINATE: 12,
  EXCHANGE_RESULTS: 13,
  DISPLAY_RESULTS: 14,
  IPERF_START: 15,
  IPERF_DONE: 16,
  ACCESS_DENIED: -1,
  SERVER_ERROR: -2,
} as const;

/** iperf3's i_errno for "not implemented yet": what sockbuf answers for UDP, SCTP and --bidir. */
export const IEUNIMP = 13;
/** i_errno numbers a peer may send with SERVER_ERROR, as iperf3 words them (the rest by number). */
const IPERF_ERRORS: Record<number, string> = {
  [IEUNIMP]: 'not implemented',
  102: 'unable to start listener for connections',
  114: 'unable to receive parameters from client',
  121: 'the server is busy running a test',
  130: 'unable to set socket window size',
  131: 'protocol does not exist',
  142: 'test authorization failed',
};

/** The largest control JSON sockbuf reads (iperf3's own documents are a few hundred bytes). */
export const MAX_CONTROL_JSON_BYTES = 1024 * 1024;

/** The first data stream is 1, the next 3, 4, 5 … (iperf_add_stream counts the list, then adds 1). */
export function streamId(index: number): number {
  return index === 0 ? 1 : index + 2;
}

/** A fresh cookie, as iperf3 makes one (make_cookie): 36 characters of [a-z2-7] and a NUL. */
export function makeCookie(): Buffer {
  const b = Buffer.alloc(COOKIE_BYTES);
  for (let i = 0; i < COOKIE_BYTES - 1; i++) b[i] = COOKIE_ALPHABET.charCodeAt(randomInt(32));
  return b;
}

/** One state byte. */
export function encodeState(state: number): Buffer {
  const b = Buffer.alloc(1);
  b.writeInt8(state);
  return b;
}

/** A JSON document as iperf3 frames it (JSON_write): 4-byte big-endian length, then the text. */
export function encodeJson(doc: unknown): Buffer {
  const text = Buffer.from(JSON.stringify(doc));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(text.length);
  return Buffer.concat([head, text]);
}

/** SERVER_ERROR's body: the state byte, then iperf3's i_errno and the system errno, big-endian. */
export function encodeServerError(iperfErrno: number, errno = 0): Buffer {
  const b = Buffer.alloc(9);
  b.writeInt8(State.SERVER_ERROR, 0);
  b.writeInt32BE(iperfErrno, 1);
  b.writeInt32BE(errno, 5);
  return b;
}

/** A peer's SERVER_ERROR in words. */
export function describeServerError(iperfErrno: number, errno: number): string {
  const what = IPERF_ERRORS[iperfErrno] ?? 'iperf3 error';
  return `${what} (iperf3 error ${iperfErrno}${errno ? `, errno ${errno}` : ''})`;
}

/** What a sockbuf client asks of an iperf3 server (a TCP test, ended by time). */
export interface ClientParams {
  /** Whole seconds (iperf3 reads `time` as an integer). */
  seconds: number;
  parallel: number;
  /** Bytes per write. */
  len: number;
  reverse: boolean;
  /** iperf3's -w: the server pins SO_SNDBUF and SO_RCVBUF of its data sockets to this. */
  window?: number;
}

/** The parameters document a client sends (send_parameters). */
export function paramsDocument(p: ClientParams): Record<string, unknown> {
  return {
    tcp: true,
    omit: 0,
    time: Math.max(1, Math.ceil(p.seconds)),
    num: 0,
    blockcount: 0,
    parallel: p.parallel,
    ...(p.reverse ? { reverse: true } : {}),
    ...(p.window === undefined ? {} : { window: p.window }),
    len: p.len,
    pacing_timer: 1000,
  };
}

/** A client's TCP test as a server sees it, or why it will not run. */
export type TestParams =
  | {
      ok: true;
      seconds: number;
      /** -n / -k: bytes in all (the client ends the test; a reverse server stops sending there). */
      bytes?: number;
      parallel: number;
      len: number;
      reverse: boolean;
      window?: number;
      omit: number;
      clientVersion?: string;
    }
  | { ok: false; reason: string };

const DEFAULT_TCP_BLKSIZE = 128 * 1024;
const MAX_STREAMS = 128;
/** iperf3's own bounds on -t and -O (MAX_TIME, MAX_OMIT_TIME): a client asking past them is refused. */
const MAX_TIME = 86400;
const MAX_OMIT = 600;

/** Reads a client's parameters (get_parameters); refuses what sockbuf does not run. */
export function readParams(doc: unknown): TestParams {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return { ok: false, reason: 'the parameters are not a JSON object' };
  const d = doc as Record<string, unknown>;
  const int = (k: string, dflt: number) => {
    const v = d[k];
    return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : dflt;
  };
  if (d.udp) return { ok: false, reason: 'UDP tests are not supported (sockbuf sink udp takes blast udp)' };
  if (d.sctp) return { ok: false, reason: 'SCTP tests are not supported' };
  if (!d.tcp) return { ok: false, reason: 'only TCP tests are supported' };
  if (d.bidirectional) return { ok: false, reason: '--bidir is not supported (run -R and forward apart)' };
  const parallel = int('parallel', 1);
  if (parallel < 1 || parallel > MAX_STREAMS)
    return { ok: false, reason: `parallel ${parallel} (expected 1 to ${MAX_STREAMS})` };
  const len = int('len', DEFAULT_TCP_BLKSIZE) || DEFAULT_TCP_BLKSIZE;
  if (len < 1 || len > 16 * 1024 * 1024) return { ok: false, reason: `block size ${len}` };
  const seconds = int('time', 10);
  if (seconds < 0 || seconds > MAX_TIME)
    return { ok: false, reason: `time ${seconds} s (expected 0 to ${MAX_TIME})` };
  const omit = int('omit', 0);
  if (omit < 0 || omit > MAX_OMIT) return { ok: false, reason: `omit ${omit} s (expected 0 to ${MAX_OMIT})` };
  const window = int('window', 0);
  if (!Number.isSafeInteger(window)) return { ok: false, reason: `window ${window}` };
  const num = int('num', 0);
  const blocks = int('blockcount', 0);
  const bytes = num > 0 ? num : blocks > 0 ? blocks * len : undefined;
  if (bytes !== undefined && !Number.isSafeInteger(bytes)) return { ok: false, reason: `${bytes} bytes` };
  return {
    ok: true,
    seconds,
    ...(bytes === undefined ? {} : { bytes }),
    parallel,
    len,
    reverse: Boolean(d.reverse),
    ...(window > 0 ? { window } : {}),
    omit,
    ...(typeof d.client_version === 'string' ? { clientVersion: d.client_version } : {}),
  };
}

/** One stream's line in a results document. */
export interface StreamResult {
  id: number;
  bytes: number;
  /** -1 when this side did not send (iperf3 writes it as an unsigned 64-bit -1). */
  retransmits: number;
  startSeconds: number;
  endSeconds: number;
}

export interface Results {
  cpuUtilTotal: number;
  cpuUtilUser: number;
  cpuUtilSystem: number;
  /** 1 when this side sent and counted retransmits, -1 when it received. */
  senderHasRetransmits: number;
  congestion?: string;
  streams: StreamResult[];
}

/** The results document (send_results): every field a 3.12 peer's get_results requires. */
export function resultsDocument(r: Results): Record<string, unknown> {
  return {
    cpu_util_total: r.cpuUtilTotal,
    cpu_util_user: r.cpuUtilUser,
    cpu_util_system: r.cpuUtilSystem,
    sender_has_retransmits: r.senderHasRetransmits,
    ...(r.congestion ? { congestion_used: r.congestion } : {}),
    streams: r.streams.map((s) => ({
      id: s.id,
      bytes: s.bytes,
      retransmits: s.retransmits,
      jitter: 0,
      errors: 0,
      packets: 0,
      start_time: s.startSeconds,
      end_time: s.endSeconds,
    })),
  };
}

/** iperf3 prints an unsigned 64-bit -1 as 18446744073709551615; JSON.parse makes it ~1.8e19. */
const asSigned = (v: number) => (v >= 2 ** 63 ? -1 : v);

/** A peer's results document (get_results); throws a PeerError naming the missing field. */
export function readResults(doc: unknown): Results {
  const d = (doc ?? {}) as Record<string, unknown>;
  const num = (o: Record<string, unknown>, k: string, where: string) => {
    const v = o?.[k];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new PeerError(`the peer's results lack ${where}${k}`);
    return v;
  };
  if (!Array.isArray(d.streams)) throw new PeerError("the peer's results lack streams");
  return {
    cpuUtilTotal: num(d, 'cpu_util_total', ''),
    cpuUtilUser: num(d, 'cpu_util_user', ''),
    cpuUtilSystem: num(d, 'cpu_util_system', ''),
    senderHasRetransmits: asSigned(num(d, 'sender_has_retransmits', '')),
    ...(typeof d.congestion_used === 'string' ? { congestion: d.congestion_used } : {}),
    streams: (d.streams as Record<string, unknown>[]).map((s) => ({
      id: num(s, 'id', 'streams[].'),
      bytes: num(s, 'bytes', 'streams[].'),
      retransmits: asSigned(num(s, 'retransmits', 'streams[].')),
      startSeconds: typeof s.start_time === 'number' ? s.start_time : 0,
      endSeconds: typeof s.end_time === 'number' ? s.end_time : 0,
    })),
  };
}

/** CPU use between two process.cpuUsage() readings over `seconds` of wall time, in % as iperf3 reports it. */
export function cpuUtil(
  used: NodeJS.CpuUsage,
  seconds: number,
): Pick<Results, 'cpuUtilTotal' | 'cpuUtilUser' | 'cpuUtilSystem'> {
  const pct = (us: number) => (seconds > 0 ? us / 1e4 / seconds : 0);
  return {
    cpuUtilTotal: pct(used.user + used.system),
    cpuUtilUser: pct(used.user),
    cpuUtilSystem: pct(used.system),
  };
}
