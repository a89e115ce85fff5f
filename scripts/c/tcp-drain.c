// Same-run C ends for scripts/drain-bench.ts (built there with gcc into a temporary directory).
//   tcp-drain recv SIZE                          listens on 127.0.0.1:0, prints {"port":N}, accepts one
//                                                connection and read()s it with a SIZE-byte buffer to EOF;
//                                                cpuSeconds is its getrusage (user + system)
//   tcp-drain send PORT BYTES FRAME [HELLO_FILE] connects to 127.0.0.1:PORT and writes frames of FRAME
//                                                payload bytes until at least BYTES stream bytes are sent
//                                                (whole frames), then the trailer; with HELLO_FILE its
//                                                bytes go first; cpuSeconds is its getrusage (user +
//                                                system) from connect to close; with TCP_DRAIN_WARM=N
//                                                in its environment the first N bytes are a warm-up, sent
//                                                on top of BYTES: measuredSeconds is the time from the
//                                                first frame past them to the receiver's close
// The frames are blast tcp's (src/ends/hello.ts, pattern.ts): u32be size, u64be index, u64be stream
// offset, then byte i = (index + i) & 0xff; the trailer is u32be 24, u64be ~0, u64be bytes, u64be
// frames. Without a hello the sink takes the same bytes as a plain stream (the first byte is 0x00, not
// the hello's 0x89), so a plain and a framed run differ by the hello alone.
// Each prints one JSON line at the end. Loopback only; a run stops at BYTES (or at the peer's close).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BATCH 16 /* frames per writev */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* This process's CPU time so far, user + system. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "tcp-drain: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 3; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

/* Writes every byte of the iovecs (a short writev moves them on). */
static void writev_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(fd, iov, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      die("writev");
    }
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
}

static int recv_main(long size) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0) die("socket");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0) die("listen");
  if (getsockname(ls, (struct sockaddr *)&a, &al) < 0) die("getsockname");
  printf("{\"port\":%d}\n", ntohs(a.sin_port));
  fflush(stdout);
  int fd = accept(ls, NULL, NULL);
  if (fd < 0) die("accept");
  double t0 = now_s();
  char *buf = malloc((size_t)size);
  if (!buf) die("malloc");
  unsigned long long bytes = 0, reads = 0;
  for (;;) {
    ssize_t n = read(fd, buf, (size_t)size);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("read");
    }
    if (n == 0) break;
    bytes += (unsigned long long)n;
    reads++;
  }
  double s = now_s() - t0;
  double cpu = cpu_seconds();
  printf("{\"bytes\":%llu,\"reads\":%llu,\"seconds\":%.6f,\"bytesPerSecond\":%.0f,\"cpuSeconds\":%.6f}\n",
         bytes, reads, s, bytes / s, cpu);
  return 0;
}

static int send_main(int port, unsigned long long bytes, uint32_t frame, const char *hello_file) {
  if (frame < 16) {
    fprintf(stderr, "tcp-drain: FRAME must be at least 16 (index and offset)\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
  double t0 = now_s(), cpu0 = cpu_seconds();
  if (hello_file) {
    unsigned char h[8192];
    FILE *f = fopen(hello_file, "rb");
    if (!f) die(hello_file);
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    struct iovec v = {h, n};
    writev_all(fd, &v, 1);
  }
  /* table[j] = j & 0xff: frame k's pattern bytes are table[(k & 0xff) + i], i >= 16 */
  unsigned char *table = malloc((size_t)frame + 256);
  if (!table) die("malloc");
  for (size_t j = 0; j < (size_t)frame + 256; j++) table[j] = (unsigned char)j;
  const uint64_t fb = (uint64_t)frame + 4;
  unsigned char heads[BATCH][20];
  struct iovec iov[2 * BATCH];
  const char *w = getenv("TCP_DRAIN_WARM");
  const uint64_t warm = w ? strtoull(w, NULL, 10) : 0;
  bytes += warm;
  double tw = t0;
  uint64_t kw = 0; /* the first frame past the warm-up */
  uint64_t k = 0;
  while (k * fb < bytes || k == 0) {
    if (warm && kw == 0 && k * fb >= warm) {
      tw = now_s();
      kw = k;
    }
    int m = 0;
    for (; m < BATCH && (k * fb < bytes || k == 0); m++, k++) {
      put32(heads[m], frame);
      put64(heads[m] + 4, k);
      put64(heads[m] + 12, k * fb);
      iov[2 * m] = (struct iovec){heads[m], 20};
      iov[2 * m + 1] = (struct iovec){table + (k & 0xff) + 16, frame - 16};
    }
    writev_all(fd, iov, 2 * m);
  }
  unsigned char t[28];
  put32(t, 24);
  put64(t + 4, UINT64_MAX);
  put64(t + 12, k * fb);
  put64(t + 20, k);
  struct iovec v = {t, sizeof t};
  writev_all(fd, &v, 1);
  if (shutdown(fd, SHUT_WR) < 0) die("shutdown");
  /* wait for the receiver to close: the stream is then read whole */
  char sink[4096];
  while (read(fd, sink, sizeof sink) > 0) {
  }
  double end = now_s(), s = end - t0;
  printf("{\"frames\":%llu,\"bytes\":%llu,\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"measuredBytes\":%llu,"
         "\"measuredSeconds\":%.6f}\n",
         (unsigned long long)k, (unsigned long long)(k * fb + sizeof t), s, cpu_seconds() - cpu0,
         (unsigned long long)((k - kw) * fb + sizeof t), end - tw);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "recv") == 0) return recv_main(atol(argv[2]));
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "send") == 0)
    return send_main(atoi(argv[2]), strtoull(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 10),
                     argc == 6 ? argv[5] : NULL);
  fprintf(stderr, "usage: tcp-drain recv SIZE | send PORT BYTES FRAME [HELLO_FILE]\n");
  return 2;
}
