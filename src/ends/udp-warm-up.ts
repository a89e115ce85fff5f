// The UDP sink's warm-up: datagrams sent to its own socket before the test, so that the receive path is
// compiled before anything is counted (like iperf3's --omit).
import { setTimeout as sleep } from 'node:timers/promises';
import { createUdpBlast } from './udp-blast.js';

/** Where this host reaches a socket bound to `host` (a wildcard address means loopback). */
function selfAddress(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/**
 * Sends datagrams to the sink's own socket for `seconds` (with GSO when the receiver has GRO) and waits
 * until they stopped coming, so that V8 has compiled the whole receive path (reader loop, splitting,
 * consumer) before the test: cold, at 3 M datagrams/s the path dropped ~0.9 M datagrams in its first
 * half second and none afterwards. Like iperf3's --omit; the caller then counts from zero again.
 *
 * Never faster than the receiver takes: it sends a window of datagrams at full speed, then waits until
 * the reader has taken all of them from the kernel, so at most a window (a quarter of the receive
 * buffer at ~1 KiB of kernel memory per small datagram) is ever queued and the warm-up adds nothing to
 * the kernel's drop counters (the host's Udp RcvbufErrors, which people alert on).
 */
export async function warmUp(
  host: string,
  port: number,
  gro: boolean,
  seconds: number,
  rcvbuf: number,
  taken: () => number,
  queued: () => number,
) {
  const window = Math.max(16, Math.floor(rcvbuf / 4 / 1024));
  const s = await createUdpBlast({ to: { host: selfAddress(host), port }, size: 64, rate: 'max', gso: gro });
  const t0 = performance.now();
  const base = taken();
  let sent = 0;
  try {
    while (performance.now() - t0 < seconds * 1e3) {
      sent += (await s.run({ count: window })).sent;
      // the reader took the whole window from the kernel (≤ 1 s: a lost datagram must not stall it)
      const w0 = performance.now();
      while (taken() - base < sent && performance.now() - w0 < 1000) await sleep(1);
    }
  } finally {
    s.close();
  }
  // until nothing more comes for 100 ms and nothing is queued (≤ 3 s): a warm-up datagram handed
  // out after the reset would count as a flow of the test's
  const t1 = performance.now();
  for (let seen = -1; (taken() !== seen || queued() > 0) && performance.now() - t1 < 3000; ) {
    seen = taken();
    await sleep(100);
  }
}
