// What each buffer problem means and what to do about it: the words that the doctor's findings
// (src/doctor/rules.ts), inspect's flags (src/observe/analyze.ts) and the Prometheus alert rules
// (src/observe/alerts.ts) share, so that a person reads the same advice wherever it reaches them.
// Plain text: no numbers of a particular host (the callers add those) and no template syntax.

export interface Advice {
  /** What the kernel does, or what the application did, that causes the symptom. */
  cause: string;
  /** What to do about it. */
  fix: string;
}

export const ADVICE = {
  pinnedRcvbuf: {
    cause: 'SO_RCVBUF was set before the handshake, which switches autotuning off',
    fix:
      'remove the setsockopt(SO_RCVBUF) so that autotuning sizes the buffer (up to tcp_rmem max), ' +
      'or set it to at least bandwidth × RTT (`sockbuf doctor --bandwidth B --rtt T` says how much)',
  },
  pinnedSndbuf: {
    cause: 'autotuning would have grown it, so SO_SNDBUF is probably set (pinned)',
    fix:
      'remove the setsockopt(SO_SNDBUF) so that autotuning sizes the buffer (up to tcp_wmem max), ' +
      'or set it to at least bandwidth × RTT',
  },
  pinnedSndbufSegment: {
    cause:
      'a send buffer below two segments keeps one segment in flight, and the receiver delays its ACK for it (up to 40 ms): each round trip waits for the delayed ACK',
    fix: 'remove the setsockopt(SO_SNDBUF), or set it to at least two segments and bandwidth × RTT',
  },
  stalledReader: {
    cause:
      'the receiving application stopped reading: its receive queue is full and it advertises a zero window',
    fix: 'find why the owner does not read (blocked, busy, or waiting on something else): a larger buffer would only fill too; do not remove a setsockopt for this',
  },
  udpRcvbuf: {
    cause: "datagrams dropped because a socket's receive buffer was full",
    fix: 'raise the buffer: rmem_max, SO_RCVBUF; or read faster',
  },
  udpRcvbufAtMax: {
    cause: 'it is at rmem_max',
    fix: 'raise net.core.rmem_max, or read faster',
  },
  softnetDropped: {
    cause: "packets dropped because a CPU's backlog was full",
    fix: 'raise net.core.netdev_max_backlog (`sockbuf doctor` recommends a value for your bandwidth), or spread receive work over more CPUs (RSS, RPS)',
  },
  softnetSqueezed: {
    cause: 'the receive softirq ran out of its budget with packets still waiting (time squeeze)',
    fix: 'raise net.core.netdev_budget and net.core.netdev_budget_usecs, or spread receive work over more CPUs (RSS, RPS); drops follow when the backlog fills',
  },
  listenDrops: {
    cause: "connections dropped because a listener's accept queue was full",
    fix: 'accept faster, or raise the backlog the application passes to listen() together with net.core.somaxconn (the kernel takes the smaller of the two)',
  },
  tcpMemoryPressure: {
    cause:
      'TCP sockets together reached the pressure threshold of net.ipv4.tcp_mem, so the kernel shrinks buffers and prunes queues',
    fix: 'find the sockets that hold memory (`sockbuf inspect`: large r/rb on slow readers), make them read faster, or raise net.ipv4.tcp_mem',
  },
} as const satisfies Record<string, Advice>;
