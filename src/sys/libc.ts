// The bindings to libc through koffi. This file and its siblings in src/sys are the only places
// that load koffi. Everything binds lazily, so importing sockbuf works on any platform and a call
// on a platform other than Linux throws LinuxOnlyError.
import { createRequire } from 'node:module';
import { assertLinux, SysError } from './sys-error.js';

// biome-ignore lint/suspicious/noExplicitAny: koffi functions take and return anything
type Fn = ((...args: any[]) => any) & { async: (...args: any[]) => void };

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: koffi's module object
let koffiMod: any;
// biome-ignore lint/suspicious/noExplicitAny: koffi's library object
let libc: any;
const fns = new Map<string, Fn>();

const PROTOTYPES = {
  socket: 'int socket(int, int, int)',
  bind: 'int bind(int, void *, uint32_t)',
  connect: 'int connect(int, void *, uint32_t)',
  listen: 'int listen(int, int)',
  close: 'int close(int)',
  shutdown: 'int shutdown(int, int)',
  setsockopt: 'int setsockopt(int, int, int, void *, uint32_t)',
  getsockopt: 'int getsockopt(int, int, int, void *, void *)',
  getsockname: 'int getsockname(int, void *, void *)',
  getpeername: 'int getpeername(int, void *, void *)',
  recvmmsg: 'int recvmmsg(int, void *, unsigned int, int, void *)',
  sendmmsg: 'int sendmmsg(int, void *, unsigned int, int)',
  recv: 'long recv(int, void *, size_t, int)',
  send: 'long send(int, void *, size_t, int)',
  sendto: 'long sendto(int, void *, size_t, int, void *, uint32_t)',
  poll: 'int poll(void *, unsigned long, int)',
  ppoll: 'int ppoll(void *, unsigned long, void *, void *)',
  prctl: 'int prctl(int, unsigned long, unsigned long, unsigned long, unsigned long)',
  sysconf: 'long sysconf(int)',
  gettid: 'int gettid()',
  setpriority: 'int setpriority(int, unsigned int, int)',
  ioctl: 'int ioctl(int, unsigned long, void *)',
  ioctlInt: 'int ioctl(int, unsigned long, long)',
  read: 'long read(int, void *, size_t)',
  write: 'long write(int, void *, size_t)',
  fcntl: 'int fcntl(int, int, long)',
  open: 'int open(const char *, int, int)',
  epoll_create1: 'int epoll_create1(int)',
  epoll_ctl: 'int epoll_ctl(int, int, int, void *)',
  epoll_wait: 'int epoll_wait(int, void *, int, int)',
  eventfd: 'int eventfd(unsigned int, int)',
} as const satisfies Record<string, string>;

/** koffi itself, for the struct helpers of src/sys. Throws LinuxOnlyError elsewhere. */
// biome-ignore lint/suspicious/noExplicitAny: koffi's module object
export function koffi(): any {
  assertLinux('koffi');
  koffiMod ??= require('koffi');
  return koffiMod;
}

/** The libc function `name`, bound on first use. */
export function fn(name: keyof typeof PROTOTYPES): Fn {
  let f = fns.get(name);
  if (f) return f;
  assertLinux(name);
  libc ??= koffi().load('libc.so.6');
  const proto = PROTOTYPES[name];
  f = libc.func(name === 'ioctlInt' ? proto.replace('ioctlInt', 'ioctl') : proto) as Fn;
  fns.set(name, f);
  return f;
}

/**
 * Binds `names` now (and loads koffi and libc): a thread whose later calls must not bind anything,
 * as the UDP reader thread, which Node may stop at any moment of its exit (shared-ring.ts's LIFE).
 */
export function bindNow(...names: (keyof typeof PROTOTYPES)[]): void {
  for (const name of names) fn(name);
  koffi().errno();
}

/** errno of the last failed call on this thread. */
export function errno(): number {
  return koffi().errno();
}

/** Calls `name` and throws SysError when it returns a negative value. */
export function call(name: keyof typeof PROTOTYPES, ...args: unknown[]): number {
  const r = fn(name)(...args);
  const n = typeof r === 'bigint' ? Number(r) : r;
  if (n < 0) throw new SysError(name, errno());
  return n;
}

/** Like call(), but in koffi's worker pool so a blocking call does not stall the event loop. */
export function callAsync(name: keyof typeof PROTOTYPES, ...args: unknown[]): Promise<number> {
  return new Promise((resolve, reject) => {
    // koffi's async calls keep the errno of the thread that ran them out of reach; a second
    // getsockopt(SO_ERROR) is the caller's way to learn why a connect failed.
    fn(name).async(...args, (err: unknown, r: number | bigint) => {
      if (err) return reject(err);
      const n = typeof r === 'bigint' ? Number(r) : r;
      resolve(n);
    });
  });
}

/** The address of a Buffer's first byte, for pointers inside structs. The Buffer must stay alive. */
export function addressOf(buf: Buffer | Uint8Array): bigint {
  return koffi().address(buf) as bigint;
}

const PR_SET_TIMERSLACK = 29;

/**
 * The calling thread's timer slack (prctl PR_SET_TIMERSLACK): how late the kernel may end its sleeps
 * to batch wake-ups (50 µs by default). Threads that sleep for tens of microseconds set it lower.
 */
export function setTimerSlack(ns: number): void {
  fn('prctl')(PR_SET_TIMERSLACK, ns, 0, 0, 0);
}

/**
 * The calling thread's nice value (setpriority on its tid): lower takes the CPU first when threads
 * compete. Below 0 needs CAP_SYS_NICE; returns false when refused (best effort).
 */
export function setThreadNice(nice: number): boolean {
  return fn('setpriority')(0, fn('gettid')(), nice) === 0;
}

const SC_PAGESIZE = 30;

/** The kernel's page size in bytes (sysconf(_SC_PAGESIZE)): udp_mem and tcp_mem count in pages. */
export function pageSize(): number {
  return Number(fn('sysconf')(SC_PAGESIZE));
}

/** Writes `ns` nanoseconds as a struct timespec (16 bytes, LP64) into `into`, for ppoll. */
export function timespec(ns: number, into: Buffer = Buffer.alloc(16)): Buffer {
  const sec = Math.floor(ns / 1e9);
  into.writeBigInt64LE(BigInt(sec), 0);
  into.writeBigInt64LE(BigInt(Math.floor(ns - sec * 1e9)), 8);
  return into;
}
