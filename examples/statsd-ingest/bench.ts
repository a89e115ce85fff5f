// The StatsD ingest on node:dgram and on sockbuf, each fed by hot-shots at full speed from another
// process (one metric per datagram, COUNT metrics): received, loss, CPU of the ingest per metric.
// The ingest (every thread of it) runs where this process is put, the feeder on CPU 0:
//   npm run build && flock /tmp/sockbuf-heavy.lock taskset -c 1 node --import tsx examples/statsd-ingest/bench.ts [COUNT]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Ingest, startDgramIngest, startIngest } from './ingest.js';

const count = Number(process.argv[2] ?? 300_000);

/** hot-shots in a child process (pinned to CPU 0), sending `count` increments as fast as it can. */
function feed(port: number): Promise<{ sent: number; seconds: number }> {
  const code = `
    import StatsD from 'hot-shots';
    const c = new StatsD({ host: '127.0.0.1', port: ${port}, maxBufferSize: 0 });
    const t0 = performance.now();
    let errors = 0;
    for (let i = 0; i < ${count}; i++) {
      c.increment('requests', 1, (e) => { if (e) errors++; });
      if (i % 200 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => c.close(r));
    console.log(JSON.stringify({ sent: ${count} - errors, seconds: (performance.now() - t0) / 1e3 }));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', '0', process.execPath, '--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('close', () =>
      out ? resolve(JSON.parse(out)) : reject(new Error('no result from the feeder')),
    );
  });
}

async function measure(name: string, start: () => Promise<Ingest>) {
  const ingest = await start();
  const cpu0 = process.cpuUsage();
  const fed = await feed(ingest.port);
  // until nothing more comes for 300 ms
  for (let seen = -1; ingest.metrics.lines !== seen; ) {
    seen = ingest.metrics.lines;
    await sleep(300);
  }
  await ingest.close();
  const cpu = process.cpuUsage(cpu0);
  const received = ingest.metrics.counters.get('requests') ?? 0;
  return {
    name,
    sent: fed.sent,
    sentPerSecond: Math.round(fed.sent / fed.seconds),
    received,
    lossPct: +((100 * (fed.sent - received)) / fed.sent).toFixed(3),
    cpuUsPerMetric: +((cpu.user + cpu.system) / Math.max(1, received)).toFixed(3),
  };
}

const rows = [];
for (let rep = 0; rep < 2; rep++) {
  rows.push(await measure('node:dgram', () => startDgramIngest({ listen: '127.0.0.1:0' })));
  rows.push(await measure('sockbuf', () => startIngest({ listen: '127.0.0.1:0' })));
}
for (const r of rows) console.log(JSON.stringify(r));
console.log('loadavg', readFileSync('/proc/loadavg', 'utf8').trim());
