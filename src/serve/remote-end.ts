// One end of a benchmark run on a `sockbuf serve` host, seen from here as a local process: it asks the
// server for the far end, prints its ready line (with the server's host, so a sender here can reach
// it), and when the far end is done prints every JSON line it printed and exits as it did. SIGTERM
// (the runner's way to stop a receiver) tells the server the test is done. This is what the runner's
// `remote` placement runs in place of the receiver.
import { isIP } from 'node:net';
import { EnvironmentError, UsageError } from '../errors.js';
import { formatHostPort, type HostPort, parseTo } from '../policy/address.js';
import { ServeClient } from './client.js';
import { DEFAULT_SERVE_PORT, FAR_END_STOP_SECONDS, ProtocolError } from './protocol.js';
import { requestFromArgs } from './request.js';

/** `HOST[:PORT]` (`[::1]:5209`, `::1`, `10.0.0.2`, `vm`): the port defaults to serve's 5209. */
export function parseServer(value: string, option = '--remote'): HostPort {
  const v = value.trim();
  const bare = v.startsWith('[') && v.endsWith(']') ? v.slice(1, -1) : v;
  if (isIP(bare)) return parseTo(`[${bare}]:${DEFAULT_SERVE_PORT}`, option);
  if (!bare.includes(':')) return parseTo(`${bare}:${DEFAULT_SERVE_PORT}`, option);
  return parseTo(v, option);
}

/** What runRemoteEnd takes: the serve endpoint and the end to run there. */
export interface RemoteEndOptions {
  server: HostPort;
  token?: string;
  /** The far end's sockbuf command line (`sink tcp --listen {host}:0 --json …`). */
  args: string[];
  /** Where JSON lines go (stdout). */
  print: (line: string) => void;
  /** Where the far end's stderr and warnings go. */
  warn: (line: string) => void;
  /** Aborting tells the server the test is done (the far end is stopped after its grace). */
  signal?: AbortSignal;
}

/** How long serve may take to answer a connection's hello (it answers at once). */
export const HELLO_SECONDS = 5;
/** How long serve may take to start the far end (its own limit is 10 s) and say ready. */
export const READY_SECONDS = 15;

/**
 * After a stop (the signal), how long the far end's results are waited for: serve stops the far end at
 * once (`done` with `now`), SIGKILLs it FAR_END_STOP_SECONDS later, and sends what it printed; within
 * the CLI's 5 s after a signal.
 */
export const STOP_SECONDS = FAR_END_STOP_SECONDS + 2;

/** Runs the far end remotely; resolves to its exit code, or the signal that ended it. */
export async function runRemoteEnd(o: RemoteEndOptions): Promise<number | NodeJS.Signals> {
  // an empty token is no token: serve refuses to start with one, so it is bad usage here too
  if (o.token === '') throw UsageError.invalid('token', o.token, 'a token');
  let request: ReturnType<typeof requestFromArgs>;
  try {
    request = requestFromArgs(o.args);
  } catch (err) {
    if (err instanceof ProtocolError) throw new UsageError(err.message);
    throw err;
  }
  const client = await ServeClient.connect(o.server, HELLO_SECONDS, o.signal);
  try {
    // serve answers a hello at once: a listener that never accepts, or a peer that is not sockbuf
    // serve, is found out here rather than waited on
    await client.within(client.hello(), HELLO_SECONDS, 'hello', o.signal);
    const ready = await client.within(
      client.startTest(request.kind, request.params, o.token),
      READY_SECONDS,
      'ready reply',
      o.signal,
    );
    o.print(
      JSON.stringify({
        event: 'ready',
        host: o.server.host,
        port: ready.port,
        server: formatHostPort(o.server),
        // the sender's hellos must carry it (the bench runner hands it over as SOCKBUF_SECRET)
        ...(ready.secret === undefined ? {} : { secret: ready.secret }),
      }),
    );
    // aborted: the server is told to stop the far end now; its results are waited for STOP_SECONDS, no longer
    let stopTimer: NodeJS.Timeout | undefined;
    const stopped = new Promise<never>((_, reject) => {
      const done = () => {
        client.done(true);
        stopTimer = setTimeout(() => {
          reject(
            new EnvironmentError(
              `stopped (${String(o.signal?.reason)}): the far end's results did not come within ${STOP_SECONDS} s`,
            ),
          );
        }, STOP_SECONDS * 1000);
      };
      if (o.signal?.aborted) done();
      else o.signal?.addEventListener('abort', done, { once: true });
    });
    stopped.catch(() => {});
    const result = await Promise.race([client.result(), stopped]).finally(() => clearTimeout(stopTimer));
    for (const line of result.stderr.split('\n').filter(Boolean)) o.warn(line);
    if (result.stopped && result.stopped !== 'done')
      o.warn(`sockbuf serve stopped the far end: ${result.stopped}`);
    for (const line of result.lines) {
      if ((line as { event?: unknown }).event !== 'ready') o.print(JSON.stringify(line));
    }
    // a far end that serve stopped after `done` (SIGTERM, exit 143) ended as asked
    if (result.stopped === 'done' && result.exitCode === 143) return 'SIGTERM';
    return result.exitCode ?? (result.signal as NodeJS.Signals | null) ?? 1;
  } finally {
    client.close();
  }
}
