// The StatsD benchmark's sender (scripts/statsd-bench.ts builds it with gcc): COUNT StatsD counter
// lines, one per datagram ("bench.c<i % KEYS>:1|c"), to 127.0.0.1:PORT at RATE datagrams a second,
// paced as iperf3 paces (every ~1 ms, what is due since the start, in sendmmsg batches of up to 64),
// except that a sender kept off its CPU does not catch up with a burst of more than 2 ms worth: it
// falls behind instead (the rate it reached is sent / seconds). A blocking socket: every datagram is
// taken by the kernel, so `sent` is exact.
//   statsd-send PORT RATE COUNT KEYS   →   {"sent":N,"seconds":S,"keys":K}
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: statsd-send PORT RATE COUNT KEYS\n");
    return 2;
  }
  int port = atoi(argv[1]);
  double rate = atof(argv[2]);
  long count = atol(argv[3]);
  int keys = atoi(argv[4]);
  if (port <= 0 || port > 65535 || rate <= 0 || count <= 0 || keys <= 0 || keys > 100000) {
    fprintf(stderr, "statsd-send: bad arguments\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
    perror("connect");
    return 3;
  }
  static char text[BATCH][32];
  static struct iovec iov[BATCH];
  static struct mmsghdr msgs[BATCH];
  long sent = 0;
  double start = now_s(), t0 = start;
  while (sent < count) {
    double t = now_s() - t0;
    long due = (long)(rate * t) - sent;
    long cap = (long)(rate * 2e-3) > BATCH ? (long)(rate * 2e-3) : BATCH;
    if (due > cap) { // forget the debt beyond 2 ms worth
      t0 += (due - cap) / rate;
      due = cap;
    }
    if (due > count - sent) due = count - sent;
    if (due <= 0) {
      struct timespec nap = {0, 1000000}; // 1 ms, then send what came due
      double wait = (sent + 1) / rate - t;
      if (wait < 1e-3) nap.tv_nsec = (long)(wait * 1e9);
      if (nap.tv_nsec > 0) nanosleep(&nap, NULL);
      continue;
    }
    while (due > 0) {
      int n = due > BATCH ? BATCH : (int)due;
      for (int i = 0; i < n; i++) {
        int len = snprintf(text[i], sizeof text[i], "bench.c%ld:1|c", (sent + i) % keys);
        iov[i].iov_base = text[i];
        iov[i].iov_len = len;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      int r = sendmmsg(fd, msgs, n, 0);
      if (r < 0) {
        perror("sendmmsg");
        return 3;
      }
      sent += r;
      due -= r;
    }
  }
  printf("{\"sent\":%ld,\"seconds\":%.6f,\"keys\":%d}\n", sent, now_s() - start, keys);
  close(fd);
  return 0;
}
