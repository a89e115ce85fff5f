// `node --import sockbuf/dgram/register app.js` (or --require): the application's require('dgram'),
// require('node:dgram') and `import … from 'node:dgram'` get sockbuf/dgram instead, with no change to
// its code. sockbuf's own modules keep node:dgram. The environment sets what its sockets' options
// would: SOCKBUF_DGRAM_MAX_QUEUE_DELAY (milliseconds a datagram may wait in userspace before it is
// dropped as stale) and SOCKBUF_DGRAM_READER_NICE (nice levels above the process for the reader thread).
import * as dgram from './dgram.js';
import { redirectBuiltin } from './sys/module-hook.js';
import { defaultsFromEnv, setSocketDefaults } from './udp/socket-defaults.js';

setSocketDefaults(defaultsFromEnv(process.env));
redirectBuiltin(
  ['dgram', 'node:dgram'],
  dgram,
  new URL('./dgram.js', import.meta.url).href,
  new URL('./', import.meta.url),
);
