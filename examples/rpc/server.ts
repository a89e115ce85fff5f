// A length-prefixed RPC server on sockbuf's listen(): each connection reads through the adaptive
// reader (small reads for small requests, a buffer that grows for large ones and shrinks back), a
// FrameDecoder splits the stream into requests, and each reply goes back as one frame.
//
//   import { startRpcServer } from './server.js';
//   const server = await startRpcServer({ port: 7000 }, { add: ({ a, b }) => a + b });
//   // … server.close(true)
import { FrameDecoder, listen, type TcpServer } from 'sockbuf';
import { decode, encode, type Reply, type Request } from './protocol.js';

// biome-ignore lint/suspicious/noExplicitAny: a handler takes whatever JSON the client sent
export type Handler = (params: any) => unknown;

export interface RpcServerOptions {
  host?: string;
  /** 0 picks a free port (read it from `server.port`). */
  port: number;
  /** The largest request accepted; a longer length prefix closes the connection (default 1 MiB). */
  maxRequestBytes?: number;
}

export function startRpcServer(
  opts: RpcServerOptions,
  handlers: Record<string, Handler>,
): Promise<TcpServer> {
  return listen({ host: opts.host, port: opts.port, reader: 'adaptive' }, (conn) => {
    const answer = async (req: Request) => {
      let reply: Reply;
      try {
        const handler = Object.hasOwn(handlers, req.method) ? handlers[req.method] : undefined;
        if (!handler) throw new Error(`no such method: ${req.method}`);
        reply = { id: req.id, result: (await handler(req.params)) ?? null };
      } catch (err) {
        reply = { id: req.id, error: (err as Error).message };
      }
      if (!conn.socket.destroyed) conn.socket.write(encode(reply));
    };
    const frames = new FrameDecoder(
      (payload) => {
        void answer(decode<Request>(payload)); // decode copies out of the view before the call returns
      },
      opts.maxRequestBytes ?? 1024 * 1024,
    );
    // a FrameError (an oversize length prefix) or bad JSON thrown here closes the connection
    conn.onData = (chunk) => frames.push(chunk);
  });
}
