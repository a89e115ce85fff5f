// Two hosts with their own addresses: sockbuf serve in a lab's server namespace, the client side in
// its client namespace. Every bench scenario serve has a far end for (udp, ping, tcp, drain) with
// --remote, one short run each, and a TCP far end through `sockbuf remote`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withLab } from '../../src/lab/lab.js';

const skip = process.getuid?.() !== 0 && 'needs root (the lab: network namespaces, tun devices)';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const sockbuf = (...args: string[]) => [process.execPath, '--import', 'tsx', MAIN, ...args];

test('serve across two lab hosts: bench udp|ping|tcp|drain --remote, and a TCP far end through sockbuf remote', {
  skip,
  timeout: 240_000,
}, async () => {
  await withLab({ rttMs: 1 }, async (lab) => {
    const server = lab.info.hosts.server.ipv4;
    const client = lab.info.hosts.client.ipv4;
    const serve = lab.spawn('server', sockbuf('serve', '--listen', `${server}:5209`, '--json'));
    const log: Record<string, unknown>[] = [];
    const ready = new Promise<Record<string, unknown>>((resolve) =>
      serve.onLine((l) => {
        const o = JSON.parse(l);
        log.push(o);
        if (o.event === 'ready') resolve(o);
      }),
    );
    /** One bench from the client host, its receiver on the server host: the one row, checked as remote. */
    const bench = async (...args: string[]) => {
      const b = await lab.exec(
        'client',
        sockbuf('bench', ...args, '--remote', server, '--repeat', '1', '--json'),
        {
          timeoutMs: 120_000,
        },
      );
      assert.equal(b.code, 0, `bench ${args[0]}: ${b.stderr}`);
      const doc = JSON.parse(b.stdout);
      assert.deepEqual(doc.params.placement, { name: 'remote', server: `${server}:5209` });
      assert.equal(doc.results.length, 1);
      const row = doc.results[0];
      return (key: string) => {
        const v = Number(row[key]?.median ?? row[key]);
        assert.ok(Number.isFinite(v), `bench ${args[0]}: ${key} in ${JSON.stringify(row)}`);
        return v;
      };
    };
    /** The far ends serve started, as its log names them. */
    const farEnds = () =>
      log.filter((l) => /far end: sockbuf /.test(String(l.message))).map((l) => String(l.message));
    try {
      assert.equal((await ready).host, server);
      const udp = await bench('udp', '--receivers', 'batch', '--rates', '2000', '--duration', '1s');
      assert.ok(udp('received') > 0);
      // the server saw the client host's address
      assert.ok(
        log.some((l) => String(l.message).includes(client)),
        JSON.stringify(log),
      );
      // ping: the echo end on the server host; every round trip crosses the lab's 1 ms
      const ping = await bench(
        'ping',
        '--sizes',
        '250',
        '--inflight',
        '1',
        '--policies',
        'auto',
        '--duration',
        '500ms',
      );
      assert.ok(ping('roundTripsPerSecond') > 0);
      assert.ok(ping('latencyP50Us') >= 900, `p50 ${ping('latencyP50Us')} µs across a 1 ms lab`);
      assert.match(farEnds().at(-1) ?? '', /sink tcp --echo --once --rcvbuf auto --sndbuf auto/);
      // tcp: sink on the server host, blast here
      const tcp = await bench('tcp', '--sizes', '4000', '--policies', 'auto', '--duration', '1s');
      assert.ok(tcp('bytesPerSecond') > 0);
      assert.ok(tcp('rttUs') >= 900, `blast's rtt ${tcp('rttUs')} µs across a 1 ms lab`);
      // drain: a fixed byte count through one reader on the server host
      const drain = await bench('drain', '--bytes', '4MiB', '--readers', 'adaptive');
      assert.ok(drain('bytes') >= 4 << 20);
      assert.ok(drain('reads') > 0);
      assert.equal(farEnds().length, 4, farEnds().join('\n'));

      // TCP: the far end (sink tcp) on the server host, blast on the client host
      const far = lab.spawn('client', sockbuf('remote', server, '--', 'sink', 'tcp', '--reader', 'adaptive'));
      const lines: Record<string, unknown>[] = [];
      const farReady = new Promise<Record<string, unknown>>((resolve) =>
        far.onLine((l) => {
          const o = JSON.parse(l);
          lines.push(o);
          if (o.event === 'ready') resolve(o);
        }),
      );
      const fr = await farReady;
      assert.equal(fr.host, server);
      // the far end takes only this test's client: the secret from the ready line, through the
      // environment (never argv); without it blast is refused and the far end waits on
      const blastTo = (secret?: string) => {
        const b = lab.spawn(
          'client',
          sockbuf('blast', 'tcp', '--to', `${server}:${fr.port}`, '--bytes', '4MiB', '--json'),
          { env: { SOCKBUF_SECRET: secret ?? '' } },
        );
        return b.exited.then(({ code }) => ({ code: code as number, stderr: b.stderrTail.join('\n') }));
      };
      assert.equal(typeof fr.secret, 'string');
      const refused = await blastTo();
      assert.notEqual(refused.code, 0, 'blast without the secret was refused');
      const bl = await blastTo(String(fr.secret));
      assert.equal(bl.code, 0, bl.stderr);
      const { code } = await far.exited;
      assert.equal(code, 0, far.stderrTail.join('\n'));
      const result = lines.find((l) => l.event === 'result');
      assert.ok(Number(result?.bytes) >= 4 << 20, JSON.stringify(result));
    } finally {
      await serve.stop(5);
    }
  });
});
