// Linux constants used by sockbuf. x86_64 and aarch64 share these values: both use the asm-generic
// socket.h and ioctl encodings, so one table serves both (checked against the kernel's uapi headers).

export const AF_INET = 2;
export const AF_INET6 = 10;
export const AF_NETLINK = 16;
export const NETLINK_SOCK_DIAG = 4;

export const SOCK_STREAM = 1;
export const SOCK_DGRAM = 2;
export const SOCK_RAW = 3;
export const SOCK_NONBLOCK = 0o4000;
export const SOCK_CLOEXEC = 0o2000000;

export const SOL_SOCKET = 1;
export const SO_REUSEADDR = 2;
export const SO_TYPE = 3;
/** SO_TIMESTAMPNS (the 64-bit timespec form), also the type of its control message. */
export const SO_TIMESTAMPNS = 35;
export const SO_ERROR = 4;
export const SO_BROADCAST = 6;
export const SO_SNDBUF = 7;
export const SO_RCVBUF = 8;
export const SO_REUSEPORT = 15;
export const SO_RCVTIMEO = 20; // SO_RCVTIMEO_OLD: struct timeval
export const SO_RCVBUFFORCE = 33;
export const SO_MEMINFO = 55;

export const IPPROTO_IP = 0;
export const IPPROTO_TCP = 6;
export const IPPROTO_UDP = 17;
export const IPPROTO_IPV6 = 41;
export const IPV6_V6ONLY = 26;

/** IPv4 and IPv6 hop limits and multicast (linux/in.h, linux/in6.h). */
export const IP_TTL = 2;
export const IP_MULTICAST_IF = 32;
export const IP_MULTICAST_TTL = 33;
export const IP_MULTICAST_LOOP = 34;
export const IP_ADD_MEMBERSHIP = 35;
export const IP_DROP_MEMBERSHIP = 36;
export const IP_ADD_SOURCE_MEMBERSHIP = 39;
export const IP_DROP_SOURCE_MEMBERSHIP = 40;
export const IPV6_UNICAST_HOPS = 16;
export const IPV6_MULTICAST_IF = 17;
export const IPV6_MULTICAST_HOPS = 18;
export const IPV6_MULTICAST_LOOP = 19;
export const IPV6_ADD_MEMBERSHIP = 20;
export const IPV6_DROP_MEMBERSHIP = 21;
export const MCAST_JOIN_SOURCE_GROUP = 46;
export const MCAST_LEAVE_SOURCE_GROUP = 47;

export const TCP_INFO = 11;
export const TCP_CONGESTION = 13;

export const UDP_SEGMENT = 103;
export const UDP_GRO = 104;

export const MSG_TRUNC = 0x20;
export const MSG_DONTWAIT = 0x40;

export const SHUT_RD = 0;

export const POLLIN = 0x1;
export const POLLOUT = 0x4;

export const F_GETFL = 3;
export const F_SETFL = 4;
export const O_NONBLOCK = 0o4000;
export const O_RDWR = 2;
export const O_CLOEXEC = 0o2000000;

/** SO_MEMINFO indices (include/uapi/linux/sock_diag.h). */
export const SK_MEMINFO = {
  RMEM_ALLOC: 0,
  RCVBUF: 1,
  WMEM_ALLOC: 2,
  SNDBUF: 3,
  FWD_ALLOC: 4,
  WMEM_QUEUED: 5,
  OPTMEM: 6,
  BACKLOG: 7,
  DROPS: 8,
  VARS: 9,
} as const;

/** TCP states as in include/net/tcp_states.h. */
export const TCP_STATES = [
  'unknown',
  'established',
  'syn-sent',
  'syn-recv',
  'fin-wait-1',
  'fin-wait-2',
  'time-wait',
  'close',
  'close-wait',
  'last-ack',
  'listen',
  'closing',
  'new-syn-recv',
] as const;

/** errno values the code branches on (asm-generic/errno-base.h, errno.h). */
export const EINTR = 4;
export const EIO = 5;
export const EBADF = 9;
export const EAGAIN = 11;
export const ENODEV = 19;
export const EINVAL = 22;
export const ENAMETOOLONG = 36;
export const EMSGSIZE = 90;
/** @internal (exported for its test) */
export const EADDRNOTAVAIL = 99;
/** @internal (exported for its test) */
export const ENOTCONN = 107;
export const ETIMEDOUT = 110;
export const EINPROGRESS = 115;

/** errno numbers → names, the common ones (asm-generic/errno-base.h, errno.h). */
export const ERRNO_NAMES: Record<number, string> = {
  1: 'EPERM',
  2: 'ENOENT',
  3: 'ESRCH',
  4: 'EINTR',
  5: 'EIO',
  9: 'EBADF',
  11: 'EAGAIN',
  12: 'ENOMEM',
  13: 'EACCES',
  14: 'EFAULT',
  16: 'EBUSY',
  17: 'EEXIST',
  19: 'ENODEV',
  22: 'EINVAL',
  23: 'ENFILE',
  24: 'EMFILE',
  32: 'EPIPE',
  36: 'ENAMETOOLONG',
  38: 'ENOSYS',
  88: 'ENOTSOCK',
  90: 'EMSGSIZE',
  92: 'ENOPROTOOPT',
  93: 'EPROTONOSUPPORT',
  95: 'EOPNOTSUPP',
  97: 'EAFNOSUPPORT',
  98: 'EADDRINUSE',
  99: 'EADDRNOTAVAIL',
  100: 'ENETDOWN',
  101: 'ENETUNREACH',
  103: 'ECONNABORTED',
  104: 'ECONNRESET',
  105: 'ENOBUFS',
  106: 'EISCONN',
  107: 'ENOTCONN',
  110: 'ETIMEDOUT',
  111: 'ECONNREFUSED',
  113: 'EHOSTUNREACH',
  114: 'EALREADY',
  115: 'EINPROGRESS',
};
