// The table of misbehaving peers × commands (issue 37): each command that runs for a duration ends
// within that duration plus its grace whatever the peer does (never accepts, accepts and never reads,
// answers garbage, stops mid-stream), and every command ends on the first SIGINT or SIGTERM within a
// bounded time with exit 130 / 143, leaving nothing of its process group running. Real sockets on
// loopback: the peers are a Python listener that never accepts, and node:net servers written here.
// The built CLI runs each cell (its start-up is a fraction of tsx's); cells run a few at a time.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** What starting a node process may take on this loaded 2-CPU machine, on top of each bound. */
const START_SECONDS = 4;
const AT_ONCE = 4;
/** From a signal to the exit: the command stops at once; the rest is a loaded machine's scheduling. */
const SIGNAL_SECONDS = 3;

interface Peers {
  noAccept: number;
  noRead: number;
  garbage: number;
  midStream: number;
}

let peers: Peers;
let python: ChildProcess;
const servers: net.Server[] = [];
const held = new Set<net.Socket>();

function server(onConn: (s: net.Socket) => void, pauseOnConnect = false): Promise<number> {
  const srv = net.createServer({ pauseOnConnect }, (s) => {
    held.add(s);
    s.on('error', () => {});
    s.on('close', () => held.delete(s));
    onConn(s);
  });
  servers.push(srv);
  return new Promise((r) =>
    srv.listen({ host: '127.0.0.1', port: 0 }, () => r((srv.address() as net.AddressInfo).port)),
  );
}

/** A listener whose backlog takes connections that are never accepted (the kernel completes them). */
function neverAccepts(): Promise<number> {
  python = spawn(
    'python3',
    [
      '-c',
      'import socket,sys,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(256)\nprint(s.getsockname()[1],flush=True)\nsys.stdin.read()',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    python.stdout?.once('data', (d) => resolve(Number(String(d).trim())));
    python.once('error', reject);
  });
}

// bytes no protocol of sockbuf's or iperf3's takes: a terminal escape, a NUL, a stray line
const GARBAGE = Buffer.from(
  '\u001b]0;pwned\u0007\u0000{"type":"ready","port":-1}\nHTTP/1.1 200 OK\r\n\r\n\xff\xfe',
);

before(async () => {
  assert.ok(existsSync(CLI), 'npm run build');
  peers = {
    noAccept: await neverAccepts(),
    // accepts, never reads, never writes
    noRead: await server(() => {}, true),
    // answers every connection with garbage, over and over, reading what comes
    garbage: await server((s) => {
      const t = setInterval(() => s.write(GARBAGE), 100);
      s.on('close', () => clearInterval(t));
      s.write(GARBAGE);
      s.resume();
    }),
    // reads a little, then stops reading and goes silent (the connection stays open)
    midStream: await server((s) => {
      let got = 0;
      s.on('data', (d) => {
        got += d.length;
        if (got > 64 * 1024) s.pause();
      });
    }),
  };
});

const dir = mkdtempSync(join(tmpdir(), 'sockbuf-peers-'));

after(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const s of held) s.destroy();
  for (const s of servers) s.close();
  python?.kill();
});

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
  /** Seconds from the start (or from the signal, when one was sent) to the exit. */
  seconds: number;
  leftovers: number;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `sockbuf ARGS` in its own process group; `signal` is sent once `when` resolves (given the output
 * so far). SIGKILLs the group at `killAfter` seconds (the cell then fails on its bound).
 */
async function run(
  args: string[],
  opts: { signal?: NodeJS.Signals; when?: (out: () => string) => Promise<void>; killAfter?: number } = {},
): Promise<Ran> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.once('exit', (code, sig) => r([code, sig])),
  );
  const killer = setTimeout(
    () => groupAlive(child.pid as number) && process.kill(-(child.pid as number), 'SIGKILL'),
    (opts.killAfter ?? 30) * 1000,
  );
  let from = t0;
  if (opts.signal) {
    await Promise.race([opts.when?.(() => out + err) ?? Promise.resolve(), exited]);
    from = performance.now();
    child.kill(opts.signal);
  }
  const [code, signal] = await exited;
  const seconds = (performance.now() - from) / 1000;
  clearTimeout(killer);
  // what its group left behind (a far end, a child), given a moment to go
  let leftovers = 0;
  for (let i = 0; i < 10 && groupAlive(child.pid as number); i++)
    await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(child.pid as number)) {
    leftovers = 1;
    process.kill(-(child.pid as number), 'SIGKILL');
  }
  return { code, signal, out, err, seconds, leftovers };
}

const printed =
  (what: RegExp, ms = 15_000) =>
  async (text: () => string) => {
    const end = Date.now() + ms;
    while (!what.test(text()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  };

interface Cell {
  name: string;
  run: () => Promise<Ran>;
  /** Seconds it may take (from the start, or from the signal), start-up of node added for a start. */
  bound: number;
  codes: number[];
  check?: (r: Ran) => void;
}

const P = (port: number) => `127.0.0.1:${port}`;
const kinds = ['noAccept', 'noRead', 'garbage', 'midStream'] as const;

function cells(): Cell[] {
  const c: Cell[] = [];
  for (const k of kinds) {
    c.push({
      name: `blast tcp --duration 1s → a peer that ${k}`,
      run: () => run(['blast', 'tcp', '--to', P(peers[k]), '--duration', '1s', '--json']),
      bound: 1 + 2 + START_SECONDS,
      // a peer that reads everything and closes when blast does took the stream (its answers are
      // not blast's business going forward)
      codes: k === 'garbage' ? [0] : [1],
      check: (r) =>
        k === 'garbage' || assert.match(r.err, /stalled|receiver|closed|ECONNRESET|EPIPE|mismatch/i),
    });
    c.push({
      name: `blast tcp --iperf3 --duration 1s → a peer that ${k}`,
      run: () => run(['blast', 'tcp', '--iperf3', '--to', P(peers[k]), '--duration', '1s', '--json']),
      bound: 1 + 3 + START_SECONDS,
      codes: [1, 3],
    });
    c.push({
      name: `remote → a "serve" that ${k}`,
      run: () => run(['remote', P(peers[k]), '--', 'sink', 'tcp']),
      bound: 5 + START_SECONDS,
      codes: [1, 3],
    });
  }
  for (const k of ['noAccept', 'noRead', 'midStream'] as const)
    c.push({
      name: `blast tcp --bytes 1G --stall-timeout 2s → a peer that ${k}`,
      run: () =>
        run(['blast', 'tcp', '--to', P(peers[k]), '--bytes', '1G', '--stall-timeout', '2s', '--json']),
      // 2 s without progress, checked every 0.5 s
      bound: 2 + 1 + START_SECONDS,
      codes: [1],
      check: (r) => assert.match(r.err, /blast tcp: the receiver took nothing for 2 s/),
    });
  c.push({
    name: 'blast tcp --bytes 1G → a peer that never reads: the default stall bound (10 s)',
    run: () => run(['blast', 'tcp', '--to', P(peers.noRead), '--bytes', '1G', '--json']),
    bound: 10 + 1 + START_SECONDS,
    codes: [1],
  });
  c.push({
    name: 'blast tcp --reverse --bytes 1G --stall-timeout 2s → a peer that never accepts',
    run: () =>
      run(['blast', 'tcp', '--reverse', '--to', P(peers.noAccept), '--bytes', '1G', '--stall-timeout', '2s']),
    bound: 2 + 1 + START_SECONDS,
    codes: [1],
  });
  c.push({
    name: 'blast tcp --reverse --duration 1s → a peer that never accepts',
    run: () => run(['blast', 'tcp', '--reverse', '--to', P(peers.noAccept), '--duration', '1s', '--json']),
    bound: 1 + 2 + START_SECONDS,
    codes: [1],
  });
  c.push({
    name: 'blast tcp --reverse --duration 1s → a peer that answers garbage',
    run: () => run(['blast', 'tcp', '--reverse', '--to', P(peers.garbage), '--duration', '1s', '--json']),
    bound: 1 + 2 + START_SECONDS,
    codes: [1],
  });
  c.push({
    name: 'bench ping --remote → a "serve" that never accepts',
    run: () => run(['bench', 'ping', '--remote', P(peers.noAccept), '--repeat', '1']),
    // two processes start: bench, and the remote end it runs as its receiver
    bound: 5 + 2 * START_SECONDS,
    codes: [1, 3],
  });
  c.push({
    name: 'remote → a "serve" that never accepts, SIGINT while it waits: exit 130',
    run: () =>
      run(['remote', P(peers.noAccept), '--', 'sink', 'tcp'], {
        signal: 'SIGINT',
        when: () => new Promise((r) => setTimeout(r, 5000)),
      }),
    bound: SIGNAL_SECONDS,
    codes: [130],
  });
  for (const module of ['sockbuf', 'iperf3'] as const)
    for (const k of ['noAccept', 'garbage'] as const)
      c.push({
        name: `exporter /probe module=${module} → a peer that ${k}: answered by its cap`,
        run: () => probe(module, peers[k]),
        bound: 3 + 2,
        codes: [143],
      });
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    const ready = printed(/ready|listening|serving/);
    c.push({
      name: `serve, ${sig} with a garbage client connected`,
      run: () =>
        run(['serve', '--listen', '127.0.0.1:0', '--json'], {
          signal: sig,
          when: async (text) => {
            await ready(text);
            const s = net.connect({ host: '127.0.0.1', port: Number(/"port":(\d+)/.exec(text())?.[1]) });
            s.on('error', () => {});
            held.add(s);
            s.write(GARBAGE);
            await new Promise((r) => setTimeout(r, 200));
          },
        }),
      bound: SIGNAL_SECONDS,
      codes: [code],
    });
    c.push({
      name: `sink udp, ${sig}`,
      run: () => run(['sink', 'udp', '--listen', '127.0.0.1:0', '--json'], { signal: sig, when: ready }),
      bound: SIGNAL_SECONDS,
      codes: [code],
    });
    c.push({
      name: `sink tcp --iperf3, ${sig}`,
      run: () =>
        run(['sink', 'tcp', '--iperf3', '--listen', '127.0.0.1:0', '--json'], { signal: sig, when: ready }),
      bound: SIGNAL_SECONDS,
      codes: [code],
    });
    c.push({
      name: `exporter, ${sig}`,
      run: () => run(['exporter', '--listen', '127.0.0.1:0'], { signal: sig, when: ready }),
      bound: SIGNAL_SECONDS,
      codes: [code],
    });
    c.push({
      name: `inspect --watch 1s, ${sig}`,
      run: () => run(['inspect', '--watch', '1s', '--json'], { signal: sig, when: printed(/\{/) }),
      bound: SIGNAL_SECONDS,
      codes: [code],
    });
    c.push({
      name: `bench drain (a 64 GiB run), ${sig}: both ends stopped`,
      run: () =>
        run(['bench', 'drain', '--bytes', '64GiB', '--readers', 'fixed:64K', '--repeat', '1'], {
          signal: sig,
          when: () => new Promise((r) => setTimeout(r, 4000)),
        }),
      bound: SIGNAL_SECONDS,
      codes: [code],
      check: (r) => assert.match(r.err, new RegExp(`interrupted by ${sig}; both ends stopped`)),
    });
    c.push({
      name: `bench drain (1000 short runs), ${sig}: the table of the runs it had`,
      run: () =>
        run(['bench', 'drain', '--bytes', '8M', '--readers', 'fixed:64K', '--repeat', '1000'], {
          signal: sig,
          when: () => new Promise((r) => setTimeout(r, 6000)),
        }),
      bound: SIGNAL_SECONDS,
      codes: [code],
      check: (r) => assert.match(r.out, /^fixed:64K +\d+\.\d\d/m),
    });
    c.push({
      name: `bench (the quick suite, drain only), ${sig}: what it had written, the entry said interrupted`,
      run: async () => {
        const out = join(dir, `suite-${sig}.json`);
        const r = await run(
          ['bench', '--only', 'drain', '--out', out, '--html', join(dir, `suite-${sig}.html`)],
          { signal: sig, when: () => new Promise((res) => setTimeout(res, 4000)) },
        );
        return { ...r, out: existsSync(out) ? readFileSync(out, 'utf8') : '(no results file)' };
      },
      bound: SIGNAL_SECONDS,
      codes: [code],
      check: (r) => assert.match(r.out, new RegExp(`"reason": ?"interrupted by ${sig}"`)),
    });
    c.push({
      name: `blast udp --duration 30s, ${sig}: its result still printed`,
      run: () =>
        run(['blast', 'udp', '--to', P(9), '--rate', '1k', '--duration', '30s', '--json'], {
          signal: sig,
          when: () => new Promise((r) => setTimeout(r, 5000)),
        }),
      bound: SIGNAL_SECONDS,
      codes: [code],
      check: (r) => assert.match(r.out, /"event":"result"/),
    });
  }
  c.push({
    name: 'sink tcp, a peer that stops mid-frame and stays; first SIGINT: exit 130, the connection reported',
    run: () => sinkWithPeer(),
    bound: SIGNAL_SECONDS,
    codes: [130],
    check: (r) => assert.match(r.out, /"event":"connection".*"interrupted":"SIGINT"/),
  });
  c.push({
    name: 'sink tcp, a blast of 128 streams sending; first SIGINT: exit 130 with its result',
    run: () => sinkWithBlast(128),
    bound: SIGNAL_SECONDS + 1,
    codes: [130],
    check: (r) => assert.match(r.out, /"event":"result".*"interrupted":"SIGINT"/),
  });
  c.push({
    name: 'sink tcp --iperf3, a real iperf3 -c -P 4 sending; first SIGTERM: exit 143 with its result',
    run: () => sinkWithIperf3(),
    bound: SIGNAL_SECONDS,
    codes: [143],
    check: (r) => assert.match(r.out, /"event":"result"/),
  });
  return c;
}

/** The exporter's /probe against `port`: the HTTP answer must come within its cap. */
async function probe(module: string, port: number): Promise<Ran> {
  let answered = 0;
  let body = '';
  const r = await run(
    [
      'exporter',
      '--listen',
      '127.0.0.1:0',
      '--probe-allow',
      '127.0.0.1',
      '--probe-duration',
      '1s',
      '--probe-max-duration',
      '3s',
    ],
    {
      signal: 'SIGTERM',
      when: async (text) => {
        await printed(/serving http/)(text);
        const url = /serving (http:\/\/\S+)\/metrics/.exec(text())?.[1];
        const t = performance.now();
        body = await (await fetch(`${url}/probe?target=127.0.0.1:${port}&module=${module}`)).text();
        answered = (performance.now() - t) / 1000;
      },
    },
  );
  assert.match(body, /^sockbuf_probe_success 0$/m, body);
  return { ...r, seconds: answered };
}

/** A sink with a peer that sent a hello and half a frame, then nothing (it stays connected). */
async function sinkWithPeer(): Promise<Ran> {
  const { encodeHello } = await import('../../src/ends/hello.js');
  let peer: net.Socket | undefined;
  const r = await run(['sink', 'tcp', '--listen', '127.0.0.1:0', '--verify', '--json'], {
    signal: 'SIGINT',
    when: async (text) => {
      await printed(/"ready"/)(text);
      const port = Number(/"port":(\d+)/.exec(text())?.[1]);
      peer = net.connect({ host: '127.0.0.1', port });
      peer.on('error', () => {});
      const hello = encodeHello({
        sockbuf: 1,
        test: 't',
        stream: 0,
        streams: 1,
        reverse: false,
        size: 65536,
      });
      peer.write(Buffer.concat([hello, Buffer.from([0, 1, 0, 4]), Buffer.alloc(1000)]));
      await printed(/"bytes":[1-9]/, 5000)(text);
    },
  });
  peer?.destroy();
  return r;
}

/** sink tcp --iperf3 with a stock iperf3 client sending 4 streams for 30 s; SIGTERM once bytes flow. */
async function sinkWithIperf3(): Promise<Ran> {
  let client: ChildProcess | undefined;
  const r = await run(
    ['sink', 'tcp', '--iperf3', '--listen', '127.0.0.1:0', '--json', '--interval', '200ms'],
    {
      signal: 'SIGTERM',
      when: async (text) => {
        await printed(/"ready"/)(text);
        const port = /"port":(\d+)/.exec(text())?.[1] ?? '';
        client = spawn('iperf3', ['-c', '127.0.0.1', '-p', port, '-t', '30', '-P', '4'], { stdio: 'ignore' });
        await printed(/"event":"interval"/, 15_000)(text);
      },
    },
  );
  client?.kill('SIGKILL');
  return r;
}

/** A sink draining a blast of `streams` streams (30 s); SIGINT once bytes flow. */
async function sinkWithBlast(streams: number): Promise<Ran> {
  let blast: ChildProcess | undefined;
  const r = await run(['sink', 'tcp', '--listen', '127.0.0.1:0', '--json', '--interval', '200ms'], {
    signal: 'SIGINT',
    when: async (text) => {
      await printed(/"ready"/)(text);
      const port = Number(/"port":(\d+)/.exec(text())?.[1]);
      blast = spawn(
        process.execPath,
        [CLI, 'blast', 'tcp', '--to', P(port), '--parallel', String(streams), '--duration', '30s'],
        {
          stdio: 'ignore',
        },
      );
      await printed(/"event":"interval","conn"/, 15_000)(text);
    },
  });
  blast?.kill('SIGKILL');
  return r;
}

test('misbehaving peers × commands: every cell ends within its bound, exit as expected, nothing left', {
  timeout: 240_000,
}, async () => {
  const all = cells();
  const results: string[] = [];
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next < all.length) {
        const cell = all[next++];
        try {
          const r = await cell.run();
          const problems: string[] = [];
          if (r.seconds > cell.bound) problems.push(`took ${r.seconds.toFixed(1)} s (bound ${cell.bound} s)`);
          if (!cell.codes.includes(r.code as number))
            problems.push(`exit ${r.code ?? r.signal} (want ${cell.codes.join(' or ')})`);
          if (r.leftovers) problems.push('its process group was left running');
          try {
            cell.check?.(r);
          } catch (e) {
            problems.push((e as Error).message.split('\n')[0]);
          }
          results.push(
            `${problems.length ? 'FAIL' : 'ok  '} ${r.seconds.toFixed(1).padStart(5)} s  exit ${r.code}  ${cell.name}`,
          );
          if (problems.length)
            failures.push(`${cell.name}: ${problems.join('; ')}; stderr: ${r.err.slice(-300)}`);
        } catch (e) {
          failures.push(`${cell.name}: ${(e as Error).message}`);
        }
      }
    }),
  );
  console.log(results.sort().join('\n'));
  assert.deepEqual(failures, []);
});
