// Same-run C references for the UDP benchmarks (scripts/udp-goals.ts builds this with gcc).
//   udp send-mmsg PORT SECONDS          sendmmsg, 64 B datagrams, full speed
//   udp send-gso  PORT SECONDS [RATE]   UDP_SEGMENT, 64 segments of 64 B per send; RATE datagrams/s (0: max)
//   udp recv-mmsg PORT [NAP_US] [MIB]   recvmmsg, until 1 s with nothing after the first datagram
//   udp recv-gro  PORT [NAP_US] [MIB]   UDP_GRO, split by the segment size, same stop rule
//   udp echo      PORT                  sends each datagram back to its sender, until killed
//                                       (PORT 0: an ephemeral one); prints {"port":N} once bound
// MIB: the receive buffer to force (SO_RCVBUFFORCE as root), 8 by default.
// A receiver given NAP_US sleeps that long when its socket is empty (after the first datagram)
// instead of waiting in poll: the sender's CPU then never pays a wake-up per datagram (the kernel
// wakes a receiver sleeping in poll from the sender's send path, on loopback on the sender's CPU),
// so a sender's rate measures the sender (scripts/udp-send-rate.ts).
// Datagrams carry sockbuf's header (src/udp/datagram.ts): u32 magic, u32 flow, f64 seq, f64 send µs;
// each sender ends with 3 trailer copies (28 B: the header with seq = datagrams sent, then u32 3).
// Every program prints one JSON line. Loopback only (127.0.0.1).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#define SIZE 64
#define BATCH 64
#define DATA_MAGIC 0x53425544u
#define TRAILER_MAGIC 0x53425554u

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
/** CPU seconds (user + system) of this process: on loopback the receive path runs in it too. */
static double cpu_s(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}
static double wall_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static void header(char *p, uint32_t magic, double seq, double us) {
  uint32_t flow = 1;
  memcpy(p, &magic, 4);
  memcpy(p + 4, &flow, 4);
  memcpy(p + 8, &seq, 8);
  memcpy(p + 16, &us, 8);
}
static void trailers(int fd, struct sockaddr_in *to, double sent) {
  char b[28];
  uint32_t copies = 3;
  header(b, TRAILER_MAGIC, sent, wall_us());
  memcpy(b + 24, &copies, 4);
  for (int c = 0; c < 3; c++) {
    usleep(20000);
    while (sendto(fd, b, sizeof b, 0, (struct sockaddr *)to, sizeof *to) < 0) usleep(1000);
  }
}

static int send_mmsg(struct sockaddr_in *to, double secs) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  static char buf[BATCH][SIZE];
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  memset(m, 0, sizeof m);
  for (int i = 0; i < BATCH; i++) {
    iov[i].iov_base = buf[i];
    iov[i].iov_len = SIZE;
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
    m[i].msg_hdr.msg_name = to;
    m[i].msg_hdr.msg_namelen = sizeof *to;
  }
  double seq = 0, t0 = now_s(), end = t0 + secs, c0 = cpu_s();
  while (now_s() < end) {
    double us = wall_us();
    for (int i = 0; i < BATCH; i++) header(buf[i], DATA_MAGIC, seq + i, us);
    int r = sendmmsg(fd, m, BATCH, 0);
    if (r > 0) seq += r;
  }
  double s = now_s() - t0, cpu = cpu_s() - c0;
  trailers(fd, to, seq);
  printf("{\"sent\":%.0f,\"seconds\":%.3f,\"datagramsPerSecond\":%.0f,\"cpuSeconds\":%.3f}\n", seq, s, seq / s, cpu);
  return 0;
}

static int send_gso(struct sockaddr_in *to, double secs, double rate) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  int seg = SIZE;
  if (setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg) < 0) return perror("UDP_SEGMENT"), 3;
  static char buf[BATCH][64 * SIZE];
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  memset(m, 0, sizeof m);
  for (int i = 0; i < BATCH; i++) {
    iov[i].iov_base = buf[i];
    iov[i].iov_len = 64 * SIZE;
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
    m[i].msg_hdr.msg_name = to;
    m[i].msg_hdr.msg_namelen = sizeof *to;
  }
  int per = rate > 0 ? 8 : BATCH; // messages (of 64 datagrams) per call: small when paced
  double seq = 0, t0 = now_s(), end = t0 + secs, c0 = cpu_s();
  for (double t = t0; t < end; t = now_s()) {
    if (rate > 0 && seq >= (t - t0) * rate) continue;
    double us = wall_us();
    for (int i = 0; i < per; i++)
      for (int j = 0; j < 64; j++) header(buf[i] + j * SIZE, DATA_MAGIC, seq + i * 64 + j, us);
    int r = sendmmsg(fd, m, per, 0);
    if (r > 0) seq += r * 64.0;
  }
  double s = now_s() - t0, cpu = cpu_s() - c0;
  seg = 0;
  setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg);
  trailers(fd, to, seq);
  printf("{\"sent\":%.0f,\"seconds\":%.3f,\"datagramsPerSecond\":%.0f,\"cpuSeconds\":%.3f}\n", seq, s, seq / s, cpu);
  return 0;
}

static int recv_loop(int port, int gro, long nap_us, long mib) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  int big = (int)(mib << 20), on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) < 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  if (gro && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on) < 0) return perror("UDP_GRO"), 3;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) return perror("bind"), 3;
  size_t slot = gro ? 65536 : 2048;
  char *buf = malloc(BATCH * slot);
  char ctl[BATCH][64];
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  printf("{\"ready\":true}\n");
  fflush(stdout);
  double data = 0, trl = 0, t_first = 0, t_last = 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  for (;;) {
    memset(m, 0, sizeof m);
    for (int i = 0; i < BATCH; i++) {
      iov[i].iov_base = buf + i * slot;
      iov[i].iov_len = slot;
      m[i].msg_hdr.msg_iov = &iov[i];
      m[i].msg_hdr.msg_iovlen = 1;
      m[i].msg_hdr.msg_control = ctl[i];
      m[i].msg_hdr.msg_controllen = gro ? sizeof ctl[i] : 0;
    }
    int r = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
    if (r <= 0) {
      if (nap_us > 0 && t_first) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = nap_us * 1000};
        nanosleep(&ts, NULL);
        if (now_s() - t_last > 1) break; // (trailers come within 60 ms of the last datagram)
      } else if (poll(&p, 1, 1000) == 0 && t_first)
        break;
      continue;
    }
    double t_now = now_s(), before = data;
    if (!t_first) t_first = t_now;
    for (int i = 0; i < r; i++) {
      unsigned len = m[i].msg_len, segsz = len;
      if (gro)
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m[i].msg_hdr); c; c = CMSG_NXTHDR(&m[i].msg_hdr, c))
          if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) segsz = *(int *)CMSG_DATA(c);
      for (unsigned off = 0; off < len; off += segsz) {
        uint32_t magic;
        memcpy(&magic, buf + i * slot + off, 4);
        if (magic == TRAILER_MAGIC) trl++;
        else data++;
      }
    }
    // the rate spans first to last data datagram: trailers come 20 ms apart after the data
    if (data > before || !t_last) t_last = t_now;
  }
  uint32_t mi[9] = {0};
  socklen_t ml = sizeof mi;
  getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &ml);
  double s = t_last - t_first;
  printf("{\"received\":%.0f,\"trailers\":%.0f,\"kernelDrops\":%u,\"seconds\":%.3f,\"datagramsPerSecond\":%.0f}\n",
         data, trl, mi[8], s, s > 0 ? data / s : 0);
  return 0;
}

// A blocking echo server on 127.0.0.1: the fixed far end of a request/response benchmark, which
// allocates nothing and never pauses, so what the client measures is the client.
static int echo(int port) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0)
    return perror("echo"), 1;
  printf("{\"port\":%d}\n", ntohs(a.sin_port));
  fflush(stdout);
  char buf[65536];
  for (;;) {
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
    if (n >= 0) sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl);
  }
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fprintf(stderr, "usage: udp send-mmsg|send-gso PORT [SECONDS] [RATE] | recv-mmsg|recv-gro PORT [NAP_US] [MIB] | echo PORT\n"), 2;
  int port = atoi(argv[2]);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  double secs = argc > 3 ? atof(argv[3]) : 3, rate = argc > 4 ? atof(argv[4]) : 0;
  if (!strcmp(argv[1], "send-mmsg")) return send_mmsg(&to, secs);
  if (!strcmp(argv[1], "send-gso")) return send_gso(&to, secs, rate);
  if (!strcmp(argv[1], "echo")) return echo(port);
  long nap = argc > 3 ? atol(argv[3]) : 0;
  long mib = argc > 4 ? atol(argv[4]) : 8;
  if (nap < 0 || nap > 999999) return fprintf(stderr, "NAP_US: 0 to 999999\n"), 2;
  if (mib < 1 || mib > 1024) return fprintf(stderr, "MIB: 1 to 1024\n"), 2;
  if (!strcmp(argv[1], "recv-mmsg")) return recv_loop(port, 0, nap, mib);
  if (!strcmp(argv[1], "recv-gro")) return recv_loop(port, 1, nap, mib);
  return fprintf(stderr, "unknown mode %s\n", argv[1]), 2;
}
