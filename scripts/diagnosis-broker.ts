// The real broker's send side, sampled: Debian's rabbitmq-server with tcp_listen_options.recbuf =
// sndbuf = 16384 on loopback (scripts/lib/rabbitmq.ts), an amqplib publisher and consumer of 256 KiB
// messages, and the broker → consumer socket's sock_diag fields every 1.5 s, 8 times (docs/diagnosis.md).
//   npx tsx scripts/diagnosis-broker.ts        (about 40 s; wrap it in flock /tmp/sockbuf-heavy.lock)
import { takeSnapshot } from '../src/observe/inspect.js';
import { startBroker, startClient } from './lib/rabbitmq.js';

const broker = await startBroker({ recbuf: 16384, sndbuf: 16384 });
const o = { url: broker.url, queue: 'diagnosis', kib: 256, count: 1_000_000, seconds: 25 };
const pub = startClient('publish', o);
const con = startClient('consume', o);
try {
  const [, c] = await Promise.all([pub.ready, con.ready]);
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 1500));
    const all = takeSnapshot({ protocols: ['tcp'], owners: false }).sockets;
    for (const x of all.filter((s) => s.remotePort === c.localPort && s.localPort === broker.port)) {
      const t = x.tcpInfo;
      const m = x.skmem;
      if (!t || !m) continue;
      console.log(
        `Send-Q ${x.wqueue} w ${m.wmemQueued} tb ${m.sndbuf} rtt ${t.rtt} us min ${t.minRtt} us unacked ${t.unacked} ` +
          `cwnd ${t.sndCwnd} snd_wnd ${t.sndWnd} notsent ${t.notsentBytes} busy ${t.busyTime} us acked ${t.bytesAcked} mss ${t.sndMss}`,
      );
    }
  }
} finally {
  await pub.stop();
  await con.stop();
  await broker.stop();
}
