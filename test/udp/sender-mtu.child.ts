// Run by sender.test.ts inside `unshare -n` with lo's MTU at 1500: GSO of 2000-byte segments is
// refused (EINVAL), 1000-byte segments are not. Prints one JSON line.
import dgram from 'node:dgram';
import { createUdpSender } from '../../src/udp/sender.js';

const r = dgram.createSocket('udp4');
const got: Buffer[] = [];
r.on('message', (m) => got.push(m));
await new Promise<void>((ok) => r.bind(0, '127.0.0.1', () => ok()));
const s = await createUdpSender({ to: `127.0.0.1:${r.address().port}`, gso: true });
let warnings = 0;
let warning = '';
s.onWarning = (m) => {
  warnings++;
  warning = m;
};
const big = () => Array.from({ length: 8 }, (_, i) => Buffer.alloc(2000, i + 1));
const sent = [...big(), ...Array.from({ length: 8 }, (_, i) => Buffer.alloc(1000, i + 100))];
await s.sendBatch(sent);
const calls = s.stats().calls;
const again = big();
await s.sendBatch(again);
const all = [...sent, ...again];
const end = Date.now() + 5000;
while (got.length < all.length && Date.now() < end) await new Promise((ok) => setTimeout(ok, 20));
const st = s.stats();
console.log(
  JSON.stringify({
    equal: got.length === all.length && got.every((g, i) => g.equals(all[i])),
    received: got.length,
    refusal: s.gsoRefusal,
    warning,
    warnings,
    usingGso: s.usingGso,
    gsoMessages: st.gsoMessages,
    secondCalls: st.calls - calls,
  }),
);
s.close();
r.close();
