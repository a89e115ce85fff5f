// The client of the RPC example on sockbuf's connect(): calls are numbered so that many can be in
// flight on one connection; replies are matched by id. The reader is adaptive, as on the server.
//
//   import { RpcClient } from './client.js';
//   const rpc = await RpcClient.connect('127.0.0.1', 7000);
//   console.log(await rpc.call('add', { a: 1, b: 2 })); // 3
//   rpc.close();
import { connect, FrameDecoder, type TcpConnection } from 'sockbuf';
import { decode, encode, type Reply } from './protocol.js';

/** The server answered with an error. */
export class RpcError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcError';
  }
}

export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(readonly conn: TcpConnection) {
    const frames = new FrameDecoder((payload) => {
      const reply = decode<Reply>(payload);
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.pending.delete(reply.id);
      if ('error' in reply) call.reject(new RpcError(reply.error));
      else call.resolve(reply.result);
    });
    conn.onData = (chunk) => frames.push(chunk);
    void conn.closed.then((err) => {
      for (const call of this.pending.values()) call.reject(err ?? new Error('connection closed'));
      this.pending.clear();
    });
  }

  static async connect(host: string, port: number): Promise<RpcClient> {
    return new RpcClient(await connect({ host, port, reader: 'adaptive' }));
  }

  call<T = unknown>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.conn.socket.write(encode({ id, method, params }));
    });
  }

  /** Ends the connection once the calls written so far have gone out. */
  close(): void {
    this.conn.socket.end();
  }
}
