// A preload for scripts/statsd-bench.ts's third variant: node:dgram as it is, but every socket asks
// for the receive buffer sockbuf/dgram asks for (4 MiB, which the kernel reports doubled: 8 MiB), so
// that the comparison shows what the larger buffer alone buys. `node --require THIS app.js`.
const dgram = require('node:dgram');

const create = dgram.createSocket;
dgram.createSocket = function createSocket(type, listener) {
  const options = typeof type === 'object' && type !== null ? { ...type } : { type };
  if (options.recvBufferSize === undefined) options.recvBufferSize = 4 * 1024 * 1024;
  return create.call(this, options, listener);
};
