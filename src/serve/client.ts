// The client side of the serve control protocol: connect, say hello, ask for a test, learn the far
// end's port, and collect its results.
import net from 'node:net';
import { errorCode, peerFailure, peerFailureText } from '../ends/peer-failure.js';
import { EnvironmentError, SockbufError } from '../errors.js';
import { formatHostPort, type HostPort } from '../policy/address.js';
import { resolveHost } from '../policy/resolve.js';
import {
  type ErrorReply,
  encodeMessage,
  type HelloReply,
  type Kind,
  LineDecoder,
  ProtocolError,
  parseReply,
  type ReadyReply,
  type Reply,
  type ResultReply,
} from './protocol.js';
import type { ParamValue } from './request.js';

/** The server answered with an error (busy, refused, unauthorized …). */
export class ServeRefused extends SockbufError {
  /** The server's reason, as its protocol names it (busy, refused, unauthorized …). */
  readonly reason: string;
  constructor(reply: ErrorReply) {
    super(`sockbuf serve refused: ${reply.message}`, 'ERR_SOCKBUF_SERVE_REFUSED');
    this.name = 'ServeRefused';
    this.reason = reply.code;
  }
}

export class ServeClient {
  private readonly decoder = new LineDecoder();
  private readonly queue: Reply[] = [];
  private waiter?: { resolve: (r: Reply) => void; reject: (e: Error) => void };
  private failure?: Error;
  /** What this end is doing with the server (said in a failure, with the server's address). */
  private doing = 'talking to';

  private constructor(
    readonly socket: net.Socket,
    readonly server: HostPort,
  ) {
    let first = true;
    socket.on('data', (chunk: Buffer) => {
      // every reply is a JSON line: a first byte that is not '{' is another protocol (an iperf3
      // server answers its control connection with a state byte), said at once rather than waited on
      if (first && chunk.length && chunk[0] !== 0x7b) {
        this.fail(
          new EnvironmentError(
            `${formatHostPort(server)} is not a sockbuf serve: it answered 0x${chunk[0].toString(16).padStart(2, '0')}${chunk[0] === 9 ? ' (as an iperf3 server does)' : ''}`,
          ),
        );
        socket.destroy();
        return;
      }
      first = false;
      try {
        for (const line of this.decoder.push(chunk)) this.deliver(parseReply(line));
      } catch (err) {
        this.fail(err as Error);
        socket.destroy();
      }
    });
    // the server's failure said with its address and what this end was doing (peer-failure.ts)
    const context = () => ({ peer: 'sockbuf serve', at: server, doing: this.doing });
    socket.on('error', (err) => this.fail(peerFailure(err, context()) as Error));
    socket.on('close', () =>
      this.fail(new EnvironmentError(peerFailureText('it closed the connection', context()))),
    );
  }

  /**
   * Connects to `sockbuf serve`; EnvironmentError (exit 3) when nothing answers, ResolveError when its
   * name does not resolve. Each address of a name is tried in turn (net.connect's autoSelectFamily).
   */
  static async connect(server: HostPort, timeoutSeconds = 10, signal?: AbortSignal): Promise<ServeClient> {
    await resolveHost(server.host);
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: server.host, port: server.port, autoSelectFamily: true });
      const onAbort = () => {
        clearTimeout(t);
        socket.destroy();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        reject(
          new EnvironmentError(
            `no answer from sockbuf serve at ${formatHostPort(server)} within ${timeoutSeconds} s`,
          ),
        );
      }, timeoutSeconds * 1000);
      socket.once('connect', () => {
        clearTimeout(t);
        signal?.removeEventListener('abort', onAbort);
        socket.setNoDelay(true);
        resolve(new ServeClient(socket, server));
      });
      socket.once('error', (err) => {
        clearTimeout(t);
        signal?.removeEventListener('abort', onAbort);
        // said as every end says a peer's failure: whom, doing what, and the likely cause
        const context = { peer: 'sockbuf serve', at: server, doing: 'connecting to', said: errorCode(err) };
        reject(new EnvironmentError(peerFailureText(err, context), { cause: err }));
      });
    });
  }

  private deliver(r: Reply): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(r);
    } else this.queue.push(r);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.reject(this.failure);
    }
  }

  /** The next reply; an error reply rejects with ServeRefused. */
  next(): Promise<Reply> {
    const got = this.queue.shift();
    const p = got
      ? Promise.resolve(got)
      : this.failure
        ? Promise.reject(this.failure)
        : new Promise<Reply>((resolve, reject) => {
            this.waiter = { resolve, reject };
          });
    return p.then((r) => {
      if (r.type === 'error') throw new ServeRefused(r);
      return r;
    });
  }

  private async expect<T extends Reply['type']>(type: T): Promise<Extract<Reply, { type: T }>> {
    const r = await this.next();
    if (r.type !== type)
      throw new ProtocolError('bad-request', `expected a ${type} reply from the server, got ${r.type}`);
    return r as Extract<Reply, { type: T }>;
  }

  send(msg: object): void {
    this.socket.write(encodeMessage(msg));
  }

  async hello(): Promise<HelloReply> {
    this.doing = 'saying hello to';
    this.send({ type: 'hello' });
    return this.expect('hello');
  }

  /** Asks for a test; resolves once the far end listens (its port on the server's host). */
  async startTest(kind: Kind, params: Record<string, ParamValue>, token?: string): Promise<ReadyReply> {
    this.doing = 'asking for a test from';
    this.send({ type: 'test', kind, params, ...(token === undefined ? {} : { token }) });
    const ready = await this.expect('ready');
    this.doing = 'running a test with';
    return ready;
  }

  /**
   * Tells the server the local end has finished: the far end is stopped after a grace period, or at
   * once with `now` (this end was stopped by a signal).
   */
  done(now = false): void {
    this.send(now ? { type: 'done', now: true } : { type: 'done' });
  }

  /** Waits for the far end's results (it exits by itself, or after `done`). */
  result(): Promise<ResultReply> {
    this.doing = "waiting for the far end's results from";
    return this.expect('result');
  }

  close(): void {
    this.socket.end();
    this.socket.destroySoon();
  }

  /**
   * `reply` bounded: rejects with an EnvironmentError when the server says nothing within `seconds`
   * (a listener that never accepts, a peer that is not sockbuf serve), or with the signal's reason
   * when it is aborted; either way the control connection is closed.
   */
  within<T>(reply: Promise<T>, seconds: number, what: string, signal?: AbortSignal): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const bounded = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.socket.destroy();
        reject(
          new EnvironmentError(
            `no ${what} from sockbuf serve at ${formatHostPort(this.server)} within ${seconds} s`,
          ),
        );
      }, seconds * 1000);
      onAbort = () => {
        this.socket.destroy();
        reject(signal?.reason);
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([reply, bounded]).finally(() => {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    });
  }
}
