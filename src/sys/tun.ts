// tun devices: open /dev/net/tun as a layer-3 device whose packets carry a virtio_net_hdr, so the
// kernel hands over (and accepts) GSO super-packets of up to 64 KiB instead of MTU-sized ones.
// linux/if_tun.h and linux/virtio_net.h.

import { ENAMETOOLONG, O_CLOEXEC, O_NONBLOCK, O_RDWR } from './constants.js';
import { call, errno, fn } from './libc.js';
import { SockbufError } from './sockbuf-error.js';
import { SysError } from './sys-error.js';

export const IFF_TUN = 0x0001;
export const IFF_NO_PI = 0x1000;
export const IFF_VNET_HDR = 0x4000;
export const TUNSETIFF = 0x400454ca;
export const TUNSETPERSIST = 0x400454cb;
export const TUNSETOFFLOAD = 0x400454d0;
export const TUNSETVNETHDRSZ = 0x400454d8;
export const TUN_F_CSUM = 0x01;
export const TUN_F_TSO4 = 0x02;
export const TUN_F_TSO6 = 0x04;
export const TUN_F_TSO_ECN = 0x08;
export const TUN_F_USO4 = 0x20;
export const TUN_F_USO6 = 0x40;
/** struct virtio_net_hdr: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset. */
export const VNET_HDR_LEN = 10;
const IFNAMSIZ = 16;
const IFREQ_SIZE = 40;

export interface TunDevice {
  fd: number;
  name: string;
  /** Whether GSO super-packets pass (TSO offloads accepted); packets then start with a vnet header. */
  gso: boolean;
  /** Offload flags the kernel accepted (TUN_F_*). */
  offloads: number;
}

export interface TunOptions {
  /** Ask for TSO/USO offloads (GSO super-packets). Default true. */
  gso?: boolean;
  /** Open non-blocking. Default true. */
  nonBlocking?: boolean;
}

/**
 * Creates the tun device `name` (not persistent: it disappears when the fd is closed, even after a
 * SIGKILL) and returns its fd. Packets read and written start with a 10-byte virtio_net_hdr.
 */
export function openTun(name: string, opts: TunOptions = {}): TunDevice {
  if (Buffer.byteLength(name) >= IFNAMSIZ)
    throw new SockbufError(`tun name too long: ${name}`, 'ENAMETOOLONG', { errno: ENAMETOOLONG });
  const fd = call(
    'open',
    '/dev/net/tun',
    O_RDWR | O_CLOEXEC | (opts.nonBlocking === false ? 0 : O_NONBLOCK),
    0,
  );
  try {
    const ifr = Buffer.alloc(IFREQ_SIZE);
    ifr.write(name, 0, 'latin1');
    ifr.writeUInt16LE(IFF_TUN | IFF_NO_PI | IFF_VNET_HDR, IFNAMSIZ);
    if (fn('ioctl')(fd, TUNSETIFF, ifr) < 0) throw new SysError('ioctl', errno(), `TUNSETIFF ${name}`);
    call('ioctlInt', fd, TUNSETPERSIST, 0);
    const hdr = Buffer.alloc(4);
    hdr.writeInt32LE(VNET_HDR_LEN, 0);
    call('ioctl', fd, TUNSETVNETHDRSZ, hdr);
    let offloads = 0;
    if (opts.gso !== false) {
      // Newer kernels also take UDP segmentation offload; older ones refuse it with EINVAL.
      const base = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
      for (const flags of [base | TUN_F_USO4 | TUN_F_USO6, base, TUN_F_CSUM]) {
        if (fn('ioctlInt')(fd, TUNSETOFFLOAD, flags) >= 0) {
          offloads = flags;
          break;
        }
      }
    } else {
      call('ioctlInt', fd, TUNSETOFFLOAD, 0);
    }
    return {
      fd,
      name: ifr.toString('latin1', 0, IFNAMSIZ).replace(/\0.*$/s, ''),
      gso: (offloads & TUN_F_TSO4) !== 0,
      offloads,
    };
  } catch (err) {
    fn('close')(fd);
    throw err;
  }
}

export function closeTun(dev: TunDevice): void {
  fn('close')(dev.fd);
}
