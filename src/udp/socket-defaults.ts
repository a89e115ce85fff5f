// What sockbuf/dgram sockets get when their options do not say: the queue bound and the reader
// thread's priority. The preload (dgram-register.ts) sets them from the environment, so that an
// application run unchanged can have them too. Pure but for the one module-level record.

export interface SocketDefaults {
  /**
   * Milliseconds a datagram may wait since it reached the kernel before it is dropped as stale (0: no
   * bound; undefined, the default: a server's socket that answers gets 20, others none).
   */
  maxQueueDelay: number | undefined;
  /** Nice levels above the process the reader thread asks for (0: the process's own). */
  readerNice: number;
}

const defaults: SocketDefaults = { maxQueueDelay: undefined, readerNice: 0 };

export function socketDefaults(): Readonly<SocketDefaults> {
  return defaults;
}

export function setSocketDefaults(d: Partial<SocketDefaults>): void {
  Object.assign(defaults, d);
}

/**
 * SOCKBUF_DGRAM_MAX_QUEUE_DELAY (milliseconds) and SOCKBUF_DGRAM_READER_NICE (levels above the
 * process) from `env`, checked; throws one line naming the variable and its value. Pure.
 */
export function defaultsFromEnv(env: Record<string, string | undefined>): Partial<SocketDefaults> {
  const out: Partial<SocketDefaults> = {};
  const delay = env.SOCKBUF_DGRAM_MAX_QUEUE_DELAY;
  if (delay !== undefined && delay !== '') {
    const n = Number(delay);
    if (!/^\d+(\.\d+)?$/.test(delay.trim()) || !(n >= 0 && n <= 3_600_000))
      throw new RangeError(
        `SOCKBUF_DGRAM_MAX_QUEUE_DELAY: expected milliseconds from 0 to 3600000, got '${delay}'`,
      );
    out.maxQueueDelay = n;
  }
  const nice = env.SOCKBUF_DGRAM_READER_NICE;
  if (nice !== undefined && nice !== '') {
    const n = Number(nice);
    if (!/^\d+$/.test(nice.trim()) || n > 39)
      throw new RangeError(`SOCKBUF_DGRAM_READER_NICE: expected a whole number from 0 to 39, got '${nice}'`);
    out.readerNice = n;
  }
  return out;
}
