// iperf3's control connection as awaitable reads: a state byte, a length-prefixed JSON document, or
// n bytes. The bytes come through the connection's reader (onData) and wait in a queue until asked
// for; a read that cannot be met rejects when the connection closes or its timeout passes.

import { EnvironmentError, PeerError } from '../../errors.js';
import { JsonLimitError, parseBoundedJson } from '../../policy/json.js';
import type { TcpConnection } from '../../tcp/connection.js';
import { encodeJson, encodeState, MAX_CONTROL_JSON_BYTES } from './protocol.js';

export class ControlChannel {
  private readonly chunks: Buffer[] = [];
  private have = 0;
  private waiter: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | undefined;
  private ended: Error | undefined;

  constructor(
    readonly conn: TcpConnection,
    /** Seconds a read may wait (a peer that says nothing is given up on). */
    private readonly timeoutSeconds = 60,
    /** Bytes already read from the connection (after the cookie). */
    first?: Uint8Array,
  ) {
    if (first?.length) {
      this.chunks.push(Buffer.from(first));
      this.have = first.length;
    }
    conn.onData = (chunk) => {
      this.chunks.push(Buffer.from(chunk)); // a view valid only during the call
      this.have += chunk.length;
      this.serve();
    };
    conn.closed.then((err) => {
      this.ended = err ?? new PeerError('the peer closed the control connection');
      this.serve();
    });
  }

  /** Bytes queued and not yet read. */
  get pending(): number {
    return this.have;
  }

  private serve(): void {
    const w = this.waiter;
    if (!w) return;
    if (this.have >= w.n) {
      this.waiter = undefined;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      this.chunks.length = 0;
      const rest = all.subarray(w.n);
      if (rest.length) this.chunks.push(rest);
      this.have = rest.length;
      w.resolve(all.subarray(0, w.n));
    } else if (this.ended) {
      this.waiter = undefined;
      w.reject(this.ended);
    }
  }

  /** The next n bytes. One read at a time. */
  read(n: number, timeoutSeconds = this.timeoutSeconds): Promise<Buffer> {
    if (this.waiter) return Promise.reject(new PeerError('a control read is already waiting'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(
          new EnvironmentError(`no answer on the control connection within ${timeoutSeconds} s`, {
            code: 'ETIMEDOUT',
          }),
        );
      }, timeoutSeconds * 1000);
      timer.unref();
      this.waiter = {
        n,
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.serve();
    });
  }

  /** Puts bytes just read back in front of the queue (a look at the first answer). */
  unread(bytes: Buffer): void {
    this.chunks.unshift(bytes);
    this.have += bytes.length;
  }

  /** The next state byte (signed). */
  async state(timeoutSeconds?: number): Promise<number> {
    return (await this.read(1, timeoutSeconds)).readInt8(0);
  }

  /** The next JSON document; throws when its length is past MAX_CONTROL_JSON_BYTES or it is not JSON. */
  async json(): Promise<unknown> {
    const n = (await this.read(4)).readUInt32BE(0);
    if (n > MAX_CONTROL_JSON_BYTES)
      throw new JsonLimitError(
        `a control JSON of ${n} bytes (more than ${MAX_CONTROL_JSON_BYTES})`,
        'too-long',
      );
    const text = (await this.read(n)).toString('utf8');
    try {
      return parseBoundedJson(text);
    } catch (e) {
      throw new PeerError(`the peer's control JSON does not parse: ${(e as Error).message}`, { cause: e });
    }
  }

  /** The first `n` bytes a connection sends (a cookie), and what came with them; onData is taken. */
  static first(
    conn: TcpConnection,
    n: number,
    timeoutSeconds: number,
  ): Promise<{ head: Buffer; rest: Buffer }> {
    const ch = new ControlChannel(conn, timeoutSeconds);
    return ch.read(n).then((head) => {
      const rest = ch.chunks.length ? Buffer.concat(ch.chunks) : Buffer.alloc(0);
      conn.onData = () => {};
      return { head: Buffer.from(head), rest };
    });
  }

  write(bytes: Uint8Array): void {
    if (!this.conn.socket.destroyed) this.conn.socket.write(bytes);
  }

  sendState(state: number): void {
    this.write(encodeState(state));
  }

  sendJson(doc: unknown): void {
    this.write(encodeJson(doc));
  }
}

/**
 * Waits until the peer has acknowledged `bytes` bytes of this end's stream (tcp_info bytes_acked), or
 * `ms` have passed: a side that stops sending lets what it wrote arrive before the counts are compared.
 */
export async function waitAcked(conn: TcpConnection, bytes: number, ms = 2000): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until && !conn.socket.destroyed) {
    const st = conn.socketStats();
    if (st?.bytesAcked === undefined || st.bytesAcked >= bytes) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}
