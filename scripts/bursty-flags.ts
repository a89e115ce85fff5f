// Issue 44 item 5, the proof: a pinned receiver fed 256 KiB bursts every 3 s, and a pinned sender
// sending bursts, each stay flagged in >= 95 % of 2 s scrapes of the real exporter (scripts/lib/
// bursty-pinned.ts says how). Prints one JSON line per case.
//   npm run build && npx tsx scripts/bursty-flags.ts [SECONDS=180] [SCRAPE=2] [receiver|sender|both]
// The sender's case needs a path with a round trip (on loopback its bursts are not limited): in a lab,
//   sockbuf lab up --rtt 40ms &   sockbuf lab exec --id ID server -- sockbuf sink tcp --listen 10.201.0.2:5399 &
//   READER=10.201.0.2:5399 sockbuf lab exec --id ID client -- npx tsx scripts/bursty-flags.ts 180 2 sender
// PHASE=locked times the bursts from the scrapes so that no scrape falls inside one (lib/bursty-pinned.ts).
// Bounded: SECONDS (at most 600) per case, and the bursts' size.
import { burstyPinned, type Side } from './lib/bursty-pinned.js';
import { builtCli } from './lib/pinned.js';

const seconds = Number(process.argv[2] ?? 180);
const scrape = Number(process.argv[3] ?? 2);
const which = process.argv[4] ?? 'both';
const sides: Side[] = which === 'both' ? ['receiver', 'sender'] : [which as Side];
for (const side of sides) {
  const r = await burstyPinned(side, [process.execPath, builtCli()], {
    seconds,
    scrapeSeconds: scrape,
    log: (l) => process.stderr.write(`${side} ${l}\n`),
    reader: side === 'sender' ? process.env.READER : undefined,
    lockPhase: process.env.PHASE === 'locked',
  });
  const pct = (n: number) => `${((100 * n) / r.scrapes).toFixed(1)} %`;
  console.log(
    JSON.stringify({ ...r, flaggedPct: pct(r.flagged), presentPct: pct(r.present), busyPct: pct(r.busy) }),
  );
}
