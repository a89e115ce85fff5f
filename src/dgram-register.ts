// `node --import sockbuf/dgram/register app.js` (or --require): the application's require('dgram'),
// require('node:dgram') and `import … from 'node:dgram'` get sockbuf/dgram's createSocket and Socket
// instead, with no change to its code (module-hook.ts: node:dgram's exports are replaced; sockbuf's
// own socket reads through the original). The environment sets what its sockets' options
// would: SOCKBUF_DGRAM_MAX_QUEUE_DELAY (milliseconds a datagram may wait in userspace before it is
// dropped as stale) and SOCKBUF_DGRAM_READER_NICE (nice levels above the process for the reader thread).
// The reader thread starts now, while the application starts (it exits again after 2 s unless a
// socket needs it): a server flooded from its first moment then has it.
import { isMainThread } from 'node:worker_threads';
import * as dgram from './dgram.js';
import { replaceBuiltin } from './sys/module-hook.js';
import { sharedReader } from './udp/shared-reader.js';
import { defaultsFromEnv, setSocketDefaults } from './udp/socket-defaults.js';

setSocketDefaults(defaultsFromEnv(process.env));
replaceBuiltin('dgram', { createSocket: dgram.createSocket, Socket: dgram.Socket });
if (isMainThread && process.platform === 'linux')
  try {
    sharedReader().prestart();
  } catch {} // no epoll or eventfd: a socket that needs the thread says why
