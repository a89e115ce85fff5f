// `node --import sockbuf/dgram/register app.js` (or --require): the application's require('dgram'),
// require('node:dgram') and `import … from 'node:dgram'` get sockbuf/dgram instead, with no change to
// its code. sockbuf's own modules keep node:dgram.
import * as dgram from './dgram.js';
import { redirectBuiltin } from './sys/module-hook.js';

redirectBuiltin(
  ['dgram', 'node:dgram'],
  dgram,
  new URL('./dgram.js', import.meta.url).href,
  new URL('./', import.meta.url),
);
