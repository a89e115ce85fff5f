// The request/response server of scripts/dns-bench.ts (issue 45): a dns2 DNS server (npm `dns2`, a
// devDependency; its UDP server is `class extends require('node:dgram').Socket`) on 127.0.0.1 only,
// answering `q<N>.bench. A` with 10.<N's three low bytes>, so that a client can check every answer.
// Run stock or with `--import sockbuf/dgram/register` (dns2 unchanged). Prints one JSON line with its
// port once it listens, and at SIGTERM one with its socket's stats() (under the preload) before it
// exits. `node [--import sockbuf/dgram/register] dns-server.cjs [PORT]`.
const dns2 = require('dns2');

const { Packet } = dns2;
const addressOf = (name) => {
  const m = /^q(\d+)\.bench\.?$/i.exec(name);
  if (!m) return undefined;
  const n = Number(m[1]);
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

let answered = 0;
const server = dns2.createServer({
  udp: true,
  handle: (request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const q = request.questions[0];
    const address = q && q.type === Packet.TYPE.A ? addressOf(q.name) : undefined;
    if (address)
      response.answers.push({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 60, address });
    else response.header.rcode = 3; // NXDOMAIN
    answered++;
    send(response);
  },
});
server.on('requestError', () => {});
const udp = server.servers.udp;
server.on('listening', () => {
  console.log(JSON.stringify({ port: udp.address().port, pid: process.pid }));
});
process.once('SIGTERM', () => {
  const stats = typeof udp.stats === 'function' ? udp.stats() : undefined;
  console.log(JSON.stringify({ answered, stats }));
  process.exit(0);
});
server.listen({ udp: { port: Number(process.argv[2] || 0), address: '127.0.0.1' } });
