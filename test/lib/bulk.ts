import type net from 'node:net';

/** Writes `bytes` (1 MiB writes, waiting for 'drain' when the socket asks), then ends the socket. */
export function writeBulk(socket: net.Socket, bytes: number, fill = 1): void {
  const chunk = Buffer.alloc(1 << 20, fill);
  let left = bytes;
  const pump = () => {
    while (left > 0) {
      left -= chunk.length;
      if (!socket.write(chunk)) return void socket.once('drain', pump);
    }
    socket.end();
  };
  pump();
}
