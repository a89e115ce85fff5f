// The batched UDP receiver's options: what an application passes, its defaults, and the checks (each
// error names the option and the value). Pure, but for asking the kernel whether it offers GRO.

import { UsageError } from '../errors.js';
import { type HostPort, parseListen } from '../policy/address.js';
import { checkChoice, checkOption, checkWhole, OPTIONS } from '../policy/option-registry.js';
import { checkHostPort, checkObject } from '../policy/shape.js';
import { groAvailable, groRefusal } from './offload.js';
import { defaultEntries } from './ring.js';

/** What createUdpReceiver takes: where it listens, the batch and slot sizes, the coalescing window, the buffer. */
export interface UdpReceiverOptions {
  /** `[HOST:]PORT` or { host, port }; port 0 picks one (see `port`). */
  listen: string | HostPort;
  /** Sockets on the same port with SO_REUSEPORT, one reader each. The kernel spreads datagrams by flow hash, so more than one helps only with many flows. */
  sockets?: number;
  /** Messages per recvmmsg batch (default 64). */
  batch?: number;
  /** Bytes per message slot (default 2048, or 64 KiB with GRO). A larger datagram is counted as truncated, never delivered. */
  slot?: number | string;
  /** Keep filling a batch until it is full or this long has passed since its first datagram: milliseconds, or a string with its unit (default '1ms'; 0: hand over what one drain gives). */
  coalesce?: number | string;
  /** Receive buffer target as getsockopt reports it (default 8MiB, or 256MiB with GRO). */
  rcvbuf?: number | string;
  /** 'wait' (default): a full ring makes the reader wait, the kernel's receive buffer absorbs the burst and what it then drops is counted as kernelDrops; 'drop': the reader keeps reading and drops in userspace (the newest datagrams). */
  onFull?: 'drop' | 'wait';
  /** UDP_GRO: true, false, or 'auto' (default: on where the kernel accepts it, unless `slot` below 64 KiB was asked for). */
  gro?: boolean | 'auto';
  /** Decode each datagram's source address into batch.addresses. */
  addresses?: boolean;
  /** Batches in the ring (default: at most 128 MiB of address space, 4 to 64: 64 without GRO, 32 with it). */
  ring?: number;
  /** Closes the receiver when aborted (as dgram.createSocket's `signal`). */
  signal?: AbortSignal;
}

/** The options with every default filled in and every size in bytes, durations in seconds. */
export type ResolvedReceiverOptions = Required<Omit<UdpReceiverOptions, 'listen' | 'ring' | 'signal'>> & {
  listen: HostPort;
  signal?: AbortSignal;
};

/**
 * The receive buffer a GRO socket asks for when none is given. GRO is for millions of datagrams a
 * second: at 9 M/s of 64 B (GSO → GRO on loopback) 8 MiB held only a few milliseconds, and the
 * reader thread, sharing a CPU with the consumer and other processes, was off it for up to 10–80 ms
 * at a time (its schedstat), so the kernel dropped 1–6 %. 64 MiB absorbed most such gaps at 0.8 × a
 * C pair's rate but still lost 1–4.6 % in 4 of 5 runs at 1.0 × (12–16 M/s), where 256 MiB lost
 * nothing in 7 of 7 runs at 0.9–1.0 × (scripts/udp-goals.ts --sink-args). The kernel charges only
 * what is queued, so an idle socket costs nothing; a stalled one holds at most this much.
 */
/** A GRO message is up to 64 KiB: with GRO every slot is the largest a slot can be. */
const GRO_SLOT = OPTIONS.slot.max;

export const GRO_RCVBUF = 256 * 1024 * 1024;

/** Checks `options` and fills in the defaults; `entries` is the ring depth, `gro` whether GRO is on. */
export function resolveReceiverOptions(options: UdpReceiverOptions): {
  options: ResolvedReceiverOptions;
  entries: number;
  gro: boolean;
  /** Why gro: 'auto' left GRO off, when it did. */
  groOff?: string;
} {
  checkObject(options);
  const listen =
    typeof options.listen === 'string'
      ? parseListen(options.listen)
      : checkHostPort(options.listen, 'listen');
  const asked = options.slot === undefined ? undefined : checkOption('slot', options.slot);
  // 'auto' turns GRO on where the kernel accepts it, unless slots too small for it were asked for.
  const groOpt = options.gro ?? OPTIONS.gro.default;
  const smallSlots = asked !== undefined && asked < GRO_SLOT;
  const gro = groAvailable(groOpt === 'auto' && smallSlots ? false : groOpt);
  const groOff =
    groOpt !== 'auto' || gro
      ? undefined
      : smallSlots
        ? `slot ${asked} B is below the 64 KiB a GRO message may need`
        : groRefusal();
  const slot = asked ?? (gro ? GRO_SLOT : 2048);
  if (gro && slot < GRO_SLOT) throw UsageError.invalid('slot', slot, `${GRO_SLOT} (64 KiB) with GRO`);
  const batch = checkWhole('batch', options.batch ?? OPTIONS.batch.default);
  const sockets = checkWhole('sockets', options.sockets ?? OPTIONS.sockets.default);
  const coalesce = checkOption('coalesce', options.coalesce ?? OPTIONS.coalesce.default) / 1000;
  const rcvbuf =
    options.rcvbuf === undefined && gro
      ? GRO_RCVBUF
      : checkOption('receiverRcvbuf', options.rcvbuf ?? OPTIONS.receiverRcvbuf.default, 'rcvbuf');
  const onFull = checkChoice('onFull', options.onFull ?? OPTIONS.onFull.default) as 'drop' | 'wait';
  const entries = checkWhole('ring', options.ring ?? defaultEntries(batch, slot));
  return {
    options: {
      listen,
      sockets,
      batch,
      slot,
      coalesce,
      rcvbuf,
      onFull,
      gro,
      addresses: options.addresses ?? false,
      signal: options.signal,
    },
    entries,
    gro,
    groOff,
  };
}
