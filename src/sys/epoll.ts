// epoll(7) and eventfd(2) for the shared UDP reader thread: one epoll set watching many sockets, an
// eventfd to wake it, and a close-on-exec dup(2). Each watched fd carries two 32-bit words in its
// epoll_data (an id and the fd); struct epoll_event is packed (12 bytes) on x86_64 and 16 bytes on
// the other 64-bit architectures.
import { errno, fn } from './libc.js';

export const EPOLLIN = 0x001;
const EPOLL_CTL_ADD = 1;
const EPOLL_CTL_DEL = 2;
const EPOLL_CLOEXEC = 0o2000000;
const EFD_CLOEXEC = 0o2000000;
const EFD_NONBLOCK = 0o4000;
const F_DUPFD_CLOEXEC = 1030;

/** sizeof(struct epoll_event) on this architecture, and where its data sits. */
export const EPOLL_EVENT_SIZE = process.arch === 'x64' ? 12 : 16;
const DATA_OFFSET = process.arch === 'x64' ? 4 : 8;

const neg = (r: number) => (r < 0 ? -errno() : r);

/** A new epoll set (close-on-exec): its fd, or −errno. */
export function epollCreate(): number {
  return neg(fn('epoll_create1')(EPOLL_CLOEXEC));
}

/** Watches `fd` for EPOLLIN (level-triggered), tagging its events with `id`: 0 or −errno. */
export function epollAdd(ep: number, fd: number, id: number): number {
  const ev = Buffer.alloc(EPOLL_EVENT_SIZE);
  ev.writeUInt32LE(EPOLLIN, 0);
  ev.writeInt32LE(id, DATA_OFFSET);
  ev.writeInt32LE(fd, DATA_OFFSET + 4);
  return neg(fn('epoll_ctl')(ep, EPOLL_CTL_ADD, fd, ev));
}

/** Stops watching `fd`: 0 or −errno. */
export function epollDel(ep: number, fd: number): number {
  return neg(fn('epoll_ctl')(ep, EPOLL_CTL_DEL, fd, Buffer.alloc(EPOLL_EVENT_SIZE)));
}

/** epoll_wait into `events` (room for `max`), `ms` −1 for ever: the count of ready fds, or −errno. */
export function epollWait(ep: number, events: Buffer, max: number, ms: number): number {
  return neg(fn('epoll_wait')(ep, events, max, ms));
}

/** Event i of an epoll_wait result: its id and fd. */
export function epollEventAt(events: Buffer, i: number): { id: number; fd: number } {
  const o = i * EPOLL_EVENT_SIZE + DATA_OFFSET;
  return { id: events.readInt32LE(o), fd: events.readInt32LE(o + 4) };
}

/** A non-blocking, close-on-exec eventfd: its fd, or −errno. */
export function eventFd(): number {
  return neg(fn('eventfd')(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

const one = Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]);
/** Adds 1 to an eventfd's counter (wakes whoever polls it). */
export function eventFdSignal(fd: number): void {
  fn('write')(fd, one, 8);
}

const sink = Buffer.alloc(8);
/** Resets an eventfd's counter (non-blocking read). */
export function eventFdDrain(fd: number): void {
  fn('read')(fd, sink, 8);
}

/** dup(2) with close-on-exec: the new fd, or −errno. */
export function dupCloexec(fd: number): number {
  return neg(fn('fcntl')(fd, F_DUPFD_CLOEXEC, 0));
}
