// The sock_diag protocol, pure: encode an inet_diag_req_v2 dump request and parse the kernel's
// answer (nlmsghdr → inet_diag_msg → rtattrs) into records. Bytes in, records out; no I/O.
//
// The parser trusts no length it reads: a header or attribute that claims more bytes than the
// datagram holds ends the walk with a problem noted, and nothing is allocated from a claimed length
// (payloads are views or copies of bytes actually present).
// Layouts: include/uapi/linux/netlink.h, inet_diag.h, sock_diag.h, rtnetlink.h.
import { AF_INET, AF_INET6, SK_MEMINFO, TCP_STATES } from '../sys/constants.js';
import { decodeMemInfo, type MemInfo } from '../sys/meminfo.js';
import { formatIPv6 } from '../sys/sockaddr.js';
import { decodeTcpInfo, TCP_INFO_MIN, type TcpInfo } from '../sys/tcpinfo.js';

export const SOCK_DIAG_BY_FAMILY = 20;
export const NLM_F_REQUEST = 0x1;
export const NLM_F_DUMP = 0x300;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
const NLMSG_HDRLEN = 16;
const REQ_V2_LEN = 56;
const DIAG_MSG_LEN = 72;

/** rtattr types of an inet_diag_msg. */
export const INET_DIAG = {
  MEMINFO: 1,
  INFO: 2,
  VEGASINFO: 3,
  CONG: 4,
  TOS: 5,
  TCLASS: 6,
  SKMEMINFO: 7,
  SHUTDOWN: 8,
};

/** All TCP states (bit i = state i), as ss -a. */
export const ALL_STATES = 0xfff;

export interface DiagRequest {
  family: 4 | 6;
  protocol: number;
  /** Bit mask of TCP states (1 << state); UDP sockets are 'close' (7) or 'established' (1). */
  states?: number;
  /** Extensions to ask for, as INET_DIAG types (1 << (type - 1) goes on the wire). */
  ext?: number[];
  seq?: number;
}

/** nlmsghdr + inet_diag_req_v2: a SOCK_DIAG_BY_FAMILY dump of every socket of family/protocol. */
export function encodeDiagRequest(r: DiagRequest): Buffer {
  const b = Buffer.alloc(NLMSG_HDRLEN + REQ_V2_LEN);
  b.writeUInt32LE(b.length, 0);
  b.writeUInt16LE(SOCK_DIAG_BY_FAMILY, 4);
  b.writeUInt16LE(NLM_F_REQUEST | NLM_F_DUMP, 6);
  b.writeUInt32LE(r.seq ?? 1, 8);
  b.writeUInt32LE(0, 12);
  const o = NLMSG_HDRLEN;
  b[o] = r.family === 6 ? AF_INET6 : AF_INET;
  b[o + 1] = r.protocol;
  b[o + 2] = (r.ext ?? [INET_DIAG.INFO, INET_DIAG.SKMEMINFO]).reduce((m, t) => m | (1 << (t - 1)), 0);
  b.writeUInt32LE((r.states ?? ALL_STATES) >>> 0, o + 4);
  // inet_diag_sockid left zero: no address filter, cookie INET_DIAG_NOCOOKIE not needed for dumps
  return b;
}

export interface DiagSocket {
  family: 4 | 6;
  protocol: number;
  state: number;
  stateName: string;
  localHost: string;
  localPort: number;
  remoteHost: string;
  remotePort: number;
  ifindex: number;
  /** The kernel's socket cookie, stable for the socket's life: the key between two samples. */
  cookie: string;
  rqueue: number;
  wqueue: number;
  uid: number;
  inode: number;
  /** INET_DIAG_INFO: struct tcp_info (TCP sockets that are not in time-wait or new-syn-recv). */
  tcpInfo?: TcpInfo;
  /** INET_DIAG_SKMEMINFO: skmem:(r,rb,t,tb,f,w,o,bl,d) as ss -m prints it. */
  skmem?: MemInfo;
  congestion?: string;
}

export interface DiagChunk {
  sockets: DiagSocket[];
  /** NLMSG_DONE or NLMSG_ERROR seen: the dump is over. */
  done: boolean;
  /** errno from NLMSG_ERROR or a negative NLMSG_DONE status (positive number). */
  error?: number;
  /** What was malformed, if anything (the walk stops at the first bad header). */
  problems: string[];
}

function addr(family: number, b: Uint8Array, o: number): string {
  if (family === AF_INET6) return formatIPv6(b.subarray(o, o + 16));
  return `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
}

/** One inet_diag_msg payload (bytes [o, end) of the datagram); undefined if too short or not inet. */
function parseDiagMsg(
  b: Uint8Array,
  v: DataView,
  o: number,
  end: number,
  protocol: number,
  problems: string[],
): DiagSocket | undefined {
  if (end - o < DIAG_MSG_LEN) {
    problems.push(`inet_diag_msg of ${end - o} bytes, need ${DIAG_MSG_LEN}`);
    return undefined;
  }
  const fam = b[o];
  if (fam !== AF_INET && fam !== AF_INET6) {
    problems.push(`inet_diag_msg of family ${fam}`);
    return undefined;
  }
  const id = o + 4;
  const state = b[o + 1];
  const hi = v.getUint32(id + 44, true);
  const lo = v.getUint32(id + 40, true);
  // decimal, as ss -e prints it; without BigInt while it fits in a double (a dump has thousands)
  const cookie = hi < 0x200000 ? String(hi * 2 ** 32 + lo) : ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  const s: DiagSocket = {
    family: fam === AF_INET6 ? 6 : 4,
    protocol,
    state,
    stateName: TCP_STATES[state] ?? `state-${state}`,
    localPort: v.getUint16(id, false),
    remotePort: v.getUint16(id + 2, false),
    localHost: addr(fam, b, id + 4),
    remoteHost: addr(fam, b, id + 20),
    ifindex: v.getUint32(id + 36, true),
    cookie,
    rqueue: v.getUint32(o + 56, true),
    wqueue: v.getUint32(o + 60, true),
    uid: v.getUint32(o + 64, true),
    inode: v.getUint32(o + 68, true),
  };
  // rtattrs: { u16 rta_len; u16 rta_type; payload }, each aligned to 4
  let a = o + DIAG_MSG_LEN;
  while (a + 4 <= end) {
    const len = v.getUint16(a, true);
    const type = v.getUint16(a + 2, true);
    if (len < 4 || a + len > end) {
      problems.push(`rtattr type ${type} claims ${len} bytes, ${end - a} left`);
      break;
    }
    const p = a + 4;
    const plen = len - 4;
    const payload = Buffer.from(b.buffer, b.byteOffset + p, plen);
    if (type === INET_DIAG.INFO) {
      if (plen >= TCP_INFO_MIN) s.tcpInfo = decodeTcpInfo(payload);
      else problems.push(`tcp_info of ${plen} bytes, need ${TCP_INFO_MIN}`);
    } else if (type === INET_DIAG.SKMEMINFO) {
      if (plen >= 4 * (SK_MEMINFO.OPTMEM + 1)) s.skmem = decodeMemInfo(payload);
      else problems.push(`skmeminfo of ${plen} bytes`);
    } else if (type === INET_DIAG.CONG) {
      const z = payload.indexOf(0);
      s.congestion = payload.toString('latin1', 0, z < 0 ? plen : z);
    }
    a += (len + 3) & ~3;
  }
  return s;
}

/**
 * Parses one datagram of a sock_diag dump answer. `protocol` is the one the request asked for
 * (inet_diag_msg does not carry it). Never throws on malformed input: problems are listed instead.
 */
export function parseDiagChunk(bytes: Uint8Array, protocol: number): DiagChunk {
  const out: DiagChunk = { sockets: [], done: false, problems: [] };
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  while (o < bytes.length) {
    if (bytes.length - o < NLMSG_HDRLEN) {
      out.problems.push(`${bytes.length - o} trailing bytes, shorter than a netlink header`);
      break;
    }
    const len = v.getUint32(o, true);
    const type = v.getUint16(o + 4, true);
    if (len < NLMSG_HDRLEN || len > bytes.length - o) {
      out.problems.push(`netlink message claims ${len} bytes, ${bytes.length - o} left`);
      break;
    }
    const p = o + NLMSG_HDRLEN;
    const end = o + len;
    if (type === NLMSG_DONE) {
      out.done = true;
      if (end - p >= 4 && v.getInt32(p, true) < 0) out.error = -v.getInt32(p, true);
      break;
    }
    if (type === NLMSG_ERROR) {
      out.done = true;
      const err = end - p >= 4 ? v.getInt32(p, true) : -5; // EIO when the errno is missing
      if (err !== 0) out.error = -err;
      break;
    }
    if (type === SOCK_DIAG_BY_FAMILY) {
      const s = parseDiagMsg(bytes, v, p, end, protocol, out.problems);
      if (s) out.sockets.push(s);
    }
    o += (len + 3) & ~3;
  }
  return out;
}
