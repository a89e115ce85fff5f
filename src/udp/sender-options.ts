// The application sender's options, destinations and errors. Pure: no socket here.
import { isIP } from 'node:net';
import { SockbufError, UsageError } from '../errors.js';
import { type HostPort, parseTo } from '../policy/address.js';
import { checkOption, checkWhole, MAX_DATAGRAM, OPTIONS } from '../policy/option-registry.js';
import { checkHostPort, checkOptionalObject } from '../policy/shape.js';
import { ERRNO_NAMES } from '../sys/constants.js';
import type { OffloadOption } from './offload.js';

export { MAX_DATAGRAM };

/** What createUdpSender takes: the destination, the socket type, the batch, GSO and the send buffer. */
export interface UdpSenderOptions {
  /**
   * Default destination, `HOST:PORT`, `{ host, port }` or an rinfo's `{ address, port }` (a host name is
   * resolved once, before createUdpSender resolves). The socket is connected to it, so a send without
   * `to` goes there.
   */
  to?: string | HostPort | { address: string; port: number };
  /** Send on this UDP socket instead of making one (the sender does not close it). */
  fd?: number;
  /** The family of the socket it makes when `to` is not given: 'udp4' (default) or 'udp6'. */
  type?: 'udp4' | 'udp6';
  /** UDP_SEGMENT (GSO) for runs of equal-size datagrams to one destination: 'auto' (default), true, false. */
  gso?: OffloadOption;
  /** Messages per sendmmsg (1 to 1024, default 64; with GSO a message carries up to 64 datagrams). */
  batch?: number;
  /** SO_SNDBUF to ask for (default: the kernel's). */
  sndbuf?: number | string;
}

/** Where one datagram goes: `HOST:PORT` with an address, `{ address, port }` (an rinfo) or `{ host, port }`. */
export type UdpTarget = string | { address: string; port: number } | HostPort;

/** What a sender has done since it was made. */
export interface UdpSenderStats {
  /** Datagrams and payload bytes the kernel accepted. */
  datagrams: number;
  bytes: number;
  /** sendmmsg calls, and the messages among them that carried several datagrams (GSO). */
  calls: number;
  gsoMessages: number;
  /** Times the socket buffer was full (EAGAIN). */
  blocked: number;
  /** Datagrams the kernel refused (the UdpSendError thrown), by errno name. */
  errorsByCode: Record<string, number>;
}

/**
 * The kernel refused datagrams [index, index + count) of a batch (one message: one datagram, or a
 * GSO run): ECONNREFUSED after an ICMP port unreachable on a connected socket, ENETUNREACH,
 * EACCES (broadcast without SO_BROADCAST) … `sent` datagrams of the call went before them.
 */
export class UdpSendError extends SockbufError {
  declare readonly errno: number;
  declare readonly syscall: 'sendmmsg';
  /** The errno of the failed datagram, its index in the call, the call's count and the datagrams sent before it. */
  constructor(
    errno: number,
    readonly index: number,
    readonly count: number,
    /** Datagrams of the call that went before (sendBatch counts the whole batch). */
    public sent: number,
  ) {
    const code = ERRNO_NAMES[errno] ?? `E${errno}`;
    super(
      `sendmmsg failed: ${code} (datagram ${index}${count > 1 ? ` and the ${count - 1} after it` : ''})`,
      code,
      { errno, syscall: 'sendmmsg' },
    );
    this.name = 'UdpSendError';
  }
}

/** The batch option, checked once. */
export function checkBatch(batch: number | undefined): number {
  return checkWhole('batch', batch ?? OPTIONS.batch.default);
}

export function checkSndbuf(sndbuf: number | string | undefined): number | undefined {
  return sndbuf === undefined ? undefined : checkOption('udpSndbuf', sndbuf, 'sndbuf');
}

/** A datagram of a batch: a Uint8Array (Buffer) of at most MAX_DATAGRAM bytes. */
export function badDatagram(d: unknown, index: number, option = `datagrams[${index}]`): UsageError {
  const what = d instanceof Uint8Array ? `${d.length} bytes` : d === null ? 'null' : `a ${typeof d}`;
  const expected =
    d instanceof Uint8Array
      ? `at most ${MAX_DATAGRAM} bytes, the largest UDP payload`
      : 'a Buffer or Uint8Array';
  return UsageError.invalid(option, what, expected);
}

/** `{ host, port }` of a destination given to sendBatch: an address, never a name (nothing resolves there). */
export function parseTarget(t: UdpTarget, option: string): HostPort {
  let hp: HostPort;
  if (typeof t === 'string') hp = parseTo(t, option);
  else if (t !== null && typeof t === 'object') {
    const host = 'address' in t ? t.address : t.host;
    hp = { host: String(host), port: t.port };
    const { min, max } = OPTIONS.port;
    if (!Number.isInteger(hp.port) || hp.port < min || hp.port > max)
      throw UsageError.invalid(option, String(t.port), `a port from ${min} to ${max}`);
  } else throw UsageError.invalid(option, String(t), 'HOST:PORT or { address, port }');
  if (!isIP(hp.host))
    throw UsageError.invalid(option, hp.host, "an IP address: resolve names first, or give the sender's to");
  return hp;
}

/** A batch's arguments: datagrams [from, end) are Buffers of at most MAX_DATAGRAM bytes, `to` long enough. */
export function checkDatagrams(
  datagrams: readonly Uint8Array[],
  to: UdpTarget | readonly UdpTarget[] | undefined,
  from: number,
  end: number,
): void {
  if (!Array.isArray(datagrams))
    throw UsageError.invalid('datagrams', typeof datagrams, 'an array of Buffers');
  if (!Number.isInteger(from) || !Number.isInteger(end) || from < 0 || end > datagrams.length || from > end)
    throw UsageError.invalid('from/end', `${from}/${end}`, `0 ≤ from ≤ end ≤ ${datagrams.length}`);
  for (let i = from; i < end; i++) {
    const d = datagrams[i];
    if (!(d instanceof Uint8Array) || d.length > MAX_DATAGRAM) throw badDatagram(d, i);
  }
  if (Array.isArray(to) && to.length < end)
    throw UsageError.invalid('to', `${to.length} destinations`, `one per datagram: ${end}`);
}

/** A sender's fixed `to`: a string, `{ host, port }` or an rinfo's `{ address, port }`, as sendBatch takes one. */
export function checkTo(to: UdpSenderOptions['to']): HostPort | undefined {
  if (to === undefined) return undefined;
  return typeof to === 'string' ? parseTo(to) : checkHostPort(to, 'to', 1);
}

/** The options object itself (plain JS may pass anything) and `type`, the socket's family when no `to` decides it. */
export function checkShape(o: UdpSenderOptions): void {
  checkOptionalObject(o);
  if (o.type !== undefined && o.type !== 'udp4' && o.type !== 'udp6')
    throw UsageError.invalid('type', String(o.type), 'udp4 or udp6');
}
