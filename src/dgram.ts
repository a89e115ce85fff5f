/**
 * `sockbuf/dgram`: a drop-in for node:dgram whose sockets read in batches (recvmmsg in a thread of
 * their own, every drop counted) and send in batches (what one tick queues leaves in one sendmmsg).
 *   import { createSocket } from 'sockbuf/dgram';   // or: const dgram = require('sockbuf/dgram');
 *
 * @packageDocumentation
 */
import { createSocket, Socket } from './udp/socket.js';

export type {
  AddressInfo,
  DgramBatch,
  DgramSocketStats,
  RemoteInfo,
  SocketOptions,
  SocketType,
} from './udp/socket.js';
export { createSocket, Socket };

/** As `import dgram from 'node:dgram'`. */
export default {
  /** node:dgram's createSocket(type | options[, listener]), making a sockbuf Socket. */
  createSocket,
  Socket,
};
