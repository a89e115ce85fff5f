// sockbuf's own sockets, as registerMetrics sees them. The TCP and UDP modules add what they open
// (trackSource) and remove it when it closes (the function trackSource returns). Sources sharing a
// name are summed under that name's label, so a server's thousand connections are one series.

/** What a UDP receiver reports; cumulative counts since it opened. */
export interface UdpSourceStats {
  /** Datagrams handed to the consumer. */
  received: number;
  /** Batches handed to JavaScript. */
  batches: number;
  /** Dropped by the kernel before the socket (SO_MEMINFO sk_drops). */
  kernelDrops: number;
  /** Read from the kernel and dropped in userspace (ring full). */
  userspaceDrops: number;
  /** Larger than a slot: counted, never delivered. */
  truncated: number;
  /** SO_RCVBUF as getsockopt reports it. */
  rcvbuf?: number;
}

/** Chrono counters of struct tcp_info, µs, cumulative since the connection opened. */
export interface TcpChrono {
  busyTime?: number;
  rwndLimited?: number;
  sndbufLimited?: number;
}

/** What a TCP connection reports. Give `fd` and the chrono counters are read from TCP_INFO. */
export interface TcpSourceStats {
  /** Bytes of read buffer this connection holds or uses now. */
  readBufferBytes: number;
  tcpInfo?: TcpChrono;
  fd?: number;
}

export interface TrackedUdp {
  readonly kind: 'udp';
  /** The `receiver` label: its local address, or a name the application chose. */
  readonly name: string;
  stats(): UdpSourceStats;
}

export interface TrackedTcp {
  readonly kind: 'tcp';
  /** The `name` label: a listener's address, 'client HOST:PORT' (where a connect() went), or a name the application chose. */
  readonly name: string;
  stats(): TcpSourceStats;
}

export type TrackedSource = TrackedUdp | TrackedTcp;

const sources = new Set<TrackedSource>();

/** Adds a source; returns the function that removes it (call it on close). */
export function trackSource(source: TrackedSource): () => void {
  sources.add(source);
  return () => {
    sources.delete(source);
  };
}

/** The sources open now. */
export function trackedSources(): TrackedSource[] {
  return [...sources];
}
