// A diagnosis preload for scripts/statsd-bench.ts (issue 35): loaded after sockbuf/dgram/register,
// it appends every sockbuf/dgram socket's stats() (mode, handovers, received, kernel and userspace
// drops) to the file SOCKBUF_DGRAM_STATS_LOG names, one JSON line every 100 ms (or every
// SOCKBUF_DGRAM_STATS_MS) and at SIGTERM, so that a step's losses can be placed: before the
// hand-over, at it, or on the reader thread. Not the
// library's API: `node --import sockbuf/dgram/register --import ./scripts/lib/dgram-stats.mjs app.js`.
import { appendFileSync } from 'node:fs';
import { Socket } from 'sockbuf/dgram';

const file = process.env.SOCKBUF_DGRAM_STATS_LOG;
if (file) {
  const sockets = new Set();
  const bind = Socket.prototype.bind;
  Socket.prototype.bind = function (...args) {
    sockets.add(this);
    return bind.apply(this, args);
  };
  const t0 = performance.now();
  const log = (why) => {
    for (const s of sockets) {
      const st = s.stats();
      if (st.mode === 'unbound') continue;
      const { mode, handovers, received, batches, kernelDrops, userspaceDrops, rcvbuf } = st;
      const ms = Math.round(performance.now() - t0);
      const line = {
        pid: process.pid,
        ms,
        why,
        mode,
        handovers,
        received,
        batches,
        kernelDrops,
        userspaceDrops,
        rcvbuf,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    }
  };
  setInterval(() => log('tick'), Number(process.env.SOCKBUF_DGRAM_STATS_MS) || 100).unref();
  process.once('SIGTERM', () => {
    log('SIGTERM');
    process.exit(0);
  });
}
