// IPv4 and IPv6 socket addresses, both ways: struct sockaddr_in / sockaddr_in6 <-> { host, port }.
import { isIPv4, isIPv6 } from 'node:net';
import { AF_INET, AF_INET6 } from './constants.js';

export interface Endpoint {
  host: string;
  port: number;
  family: 4 | 6;
}

export const SOCKADDR_STORAGE = 128;

/** struct sockaddr_in (16 bytes) or sockaddr_in6 (28 bytes) for an endpoint. */
export function encodeSockaddr(ep: { host: string; port: number }): Buffer {
  if (isIPv4(ep.host)) {
    const b = Buffer.alloc(16);
    b.writeUInt16LE(AF_INET, 0);
    b.writeUInt16BE(ep.port, 2);
    const parts = ep.host.split('.').map(Number);
    for (let i = 0; i < 4; i++) b[4 + i] = parts[i];
    return b;
  }
  if (isIPv6(ep.host)) {
    const b = Buffer.alloc(28);
    b.writeUInt16LE(AF_INET6, 0);
    b.writeUInt16BE(ep.port, 2);
    ipv6Bytes(ep.host).copy(b, 8);
    return b;
  }
  throw new TypeError(`not an IP address: ${ep.host}`);
}

/** Decodes a sockaddr written by the kernel; undefined for families other than IPv4/IPv6. */
export function decodeSockaddr(b: Buffer, offset = 0): Endpoint | undefined {
  const family = b.readUInt16LE(offset);
  const port = b.readUInt16BE(offset + 2);
  if (family === AF_INET) {
    return { host: `${b[offset + 4]}.${b[offset + 5]}.${b[offset + 6]}.${b[offset + 7]}`, port, family: 4 };
  }
  if (family === AF_INET6) {
    return { host: formatIPv6(b.subarray(offset + 8, offset + 24)), port, family: 6 };
  }
  return undefined;
}

/** The 16 bytes of an IPv6 address (handles :: and an embedded IPv4 tail). */
export function ipv6Bytes(host: string): Buffer {
  const out = Buffer.alloc(16);
  let h = host;
  const zone = h.indexOf('%');
  if (zone >= 0) h = h.slice(0, zone);
  let tail: number[] = [];
  const lastColon = h.lastIndexOf(':');
  if (h.slice(lastColon + 1).includes('.')) {
    const v4 = h
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    h = `${h.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = h.split('::');
  const a = head ? head.split(':').map((x) => Number.parseInt(x, 16)) : [];
  const z = rest !== undefined ? (rest ? rest.split(':').map((x) => Number.parseInt(x, 16)) : []) : [];
  const words = rest !== undefined ? [...a, ...new Array(8 - a.length - z.length).fill(0), ...z] : a;
  if (tail.length) words.splice(6, 2, ...tail);
  for (let i = 0; i < 8; i++) out.writeUInt16BE(words[i] ?? 0, i * 2);
  return out;
}

/** RFC 5952 text form of 16 address bytes. */
export function formatIPv6(b: Uint8Array): string {
  const words: number[] = [];
  for (let i = 0; i < 8; i++) words.push((b[i * 2] << 8) | b[i * 2 + 1]);
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return `::ffff:${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  }
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}
