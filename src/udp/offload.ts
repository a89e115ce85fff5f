// Whether to use UDP_GRO / UDP_SEGMENT: true (required: exit 3 if the kernel refuses), false, or
// 'auto' (where the kernel offers it). SOCKBUF_DISABLE_GRO=1 / SOCKBUF_DISABLE_GSO=1 make the kernel
// look as if it refused (as quic-go's QUIC_GO_DISABLE_GSO), to test and to work around the fallbacks.

import { EnvironmentError, UsageError } from '../errors.js';
import { MAX_DATAGRAM } from '../policy/option-registry.js';
import { EIO, ERRNO_NAMES } from '../sys/constants.js';
import { probeUdpOffload } from '../sys/mmsg.js';

/** A kernel offload option (gro, gso): on, off, or `auto` (on where the kernel has it). */
export type OffloadOption = boolean | 'auto';

let probed: { segment: boolean; gro: boolean } | undefined;

/** What the kernel offers, less what the environment disables. */
export function udpOffload(): { segment: boolean; gro: boolean } {
  probed ??= probeUdpOffload();
  return {
    segment: probed.segment && process.env.SOCKBUF_DISABLE_GSO !== '1',
    gro: probed.gro && process.env.SOCKBUF_DISABLE_GRO !== '1',
  };
}

function decide(option: OffloadOption, available: boolean, name: string): boolean {
  if (option === false) return false;
  if (option === 'auto') return available;
  if (option !== true) throw UsageError.invalid(name, option, 'true, false or auto');
  if (!available)
    throw new EnvironmentError(`${name}: this kernel refuses ${name === 'gro' ? 'UDP_GRO' : 'UDP_SEGMENT'}`);
  return true;
}

/** Why GRO is unavailable here, in words (for a receiver whose gro: 'auto' stayed off). */
export const groRefusal = () =>
  process.env.SOCKBUF_DISABLE_GRO === '1' && probed?.gro
    ? 'SOCKBUF_DISABLE_GRO=1'
    : 'this kernel refuses UDP_GRO';

export const groAvailable = (o: OffloadOption) => decide(o, udpOffload().gro, 'gro');
export const gsoAvailable = (o: OffloadOption) => decide(o, udpOffload().segment, 'gso');

/** Why GSO was refused: the errno name, and the segment size refused (none after EIO: all of it). */
export interface GsoRefusal {
  code: string;
  segment?: number;
}

/**
 * What a sender remembers of the kernel's refusals of UDP_SEGMENT. EIO (a device without checksum
 * offload, or no checksum at all) refuses every size; EMSGSIZE or EINVAL (a segment larger than the
 * path's MTU) that size and larger. Pure.
 */
export class GsoLimit {
  /** GSO only for segments up to this many bytes (0: none). */
  max: number;
  refusal: GsoRefusal | undefined;
  constructor(on: boolean) {
    this.max = on ? MAX_DATAGRAM : 0;
  }

  /** Remembers a refusal of a run of `segment`-byte datagrams; the warning to give, the first time. */
  refuse(errno: number, segment: number): string | undefined {
    const code = ERRNO_NAMES[errno] ?? `E${errno}`;
    const first = this.refusal === undefined;
    this.max = errno === EIO ? 0 : Math.min(this.max, segment - 1);
    this.refusal = errno === EIO ? { code } : { code, segment };
    if (!first) return undefined;
    const what = errno === EIO ? 'the device does not take UDP_SEGMENT' : `segments of ${segment} bytes`;
    return `GSO refused (${code}: ${what}); those datagrams went one by one`;
  }
}
