// One sockbuf/dgram process that ends one way (scripts/lib/dgram-exit.ts starts many): a server socket
// on the named port PORT (so that the reader thread starts at bind, with or without the preload) that
// floods itself, then, DELAY ms after bind (0 to ~150: before, while and after the thread starts):
//   natural  closes its socket and ends (the event loop empties);
//   signal   is sent SIGTERM by its parent, which its handler turns into process.exit(0);
//   sigterm  is sent SIGTERM by its parent, no handler (the default action ends it);
//   traffic  calls process.exit(0) itself while datagrams flow.
// argv: kind port delay; SOCKBUF_EXIT_PLAIN=1: `import('sockbuf/dgram')`, else node:dgram (run under
// `node --import sockbuf/dgram/register`: exit 3 if the preload did not take).
const [kind, port, delay] = process.argv.slice(2);
const plain = process.env.SOCKBUF_EXIT_PLAIN === '1';
const dgram = plain ? await import('sockbuf/dgram') : await import('node:dgram');
const s = dgram.createSocket('udp4');
if (typeof s.stats !== 'function') {
  console.error('not a sockbuf/dgram socket: the preload did not take');
  process.exit(3);
}
if (kind === 'signal') process.on('SIGTERM', () => process.exit(0));
s.on('error', (e) => {
  console.error(`socket error: ${e.message}`);
  process.exit(4);
});
s.on('message', () => {});
const payload = Buffer.alloc(100);
s.bind(Number(port), '127.0.0.1', () => {
  const flood = setInterval(() => {
    for (let i = 0; i < 100; i++) s.send(payload, Number(port), '127.0.0.1');
  }, 1);
  console.log('ready');
  if (kind === 'natural')
    setTimeout(() => {
      clearInterval(flood);
      s.close();
    }, Number(delay));
  else if (kind === 'traffic') setTimeout(() => process.exit(0), Number(delay));
});
