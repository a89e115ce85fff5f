import { ERRNO_NAMES } from './constants.js';
import { SockbufError } from './sockbuf-error.js';

/** A failed system call: carries the errno name (EINVAL, EPERM …) and the call that failed. */
export class SysError extends SockbufError {
  declare readonly errno: number;
  declare readonly syscall: string;
  /** A failed `syscall` with its positive `errno`; `detail` goes into the message. */
  constructor(syscall: string, errno: number, detail?: string) {
    const code = ERRNO_NAMES[errno] ?? `E${errno}`;
    super(`${syscall}${detail ? ` (${detail})` : ''} failed: ${code}`, code, { errno, syscall });
    this.name = 'SysError';
  }
}

/** Raised by every call into the kernel on a platform other than Linux. */
export class LinuxOnlyError extends SockbufError {
  /** What was called (`what`) on which platform. */
  constructor(what: string, platform: string = process.platform) {
    super(`${what}: sockbuf's kernel calls are Linux only (this is ${platform})`, 'ERR_SOCKBUF_LINUX_ONLY');
    this.name = 'LinuxOnlyError';
  }
}

/** Throws LinuxOnlyError on any platform but Linux (`platform` is for tests). */
export function assertLinux(what: string, platform: string = process.platform): void {
  if (platform !== 'linux') throw new LinuxOnlyError(what, platform);
}
