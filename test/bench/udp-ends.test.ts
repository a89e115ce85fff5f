import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndOutput, RunOutput } from '../../src/bench/scenario.js';
import streamer from '../../src/bench/scenarios/streamer.js';
import udp from '../../src/bench/scenarios/udp.js';
import { parsePaths, udpEnds, udpRow } from '../../src/bench/udp-ends.js';

const end = (lines: Record<string, unknown>[]): EndOutput => ({
  lines,
  code: 0,
  signal: null,
  stderrTail: [],
});

test('each path makes its sink and blast', () => {
  const e = udpEnds('batch+gro', { rate: 'max', size: '64', duration: '2s', sockets: 8, flows: 4 });
  assert.ok('sockbuf' in e.receiver && 'sockbuf' in e.sender);
  if (!('sockbuf' in e.receiver) || !('sockbuf' in e.sender)) return;
  assert.deepEqual(e.receiver.sockbuf.slice(0, 6), [
    'sink',
    'udp',
    '--listen',
    '{host}:0',
    '--receiver',
    'batch',
  ]);
  assert.ok(e.receiver.sockbuf.join(' ').includes('--gro on --sockets 8'));
  assert.ok(e.sender.sockbuf.join(' ').includes('--gso on'));
  assert.ok(e.sender.sockbuf.join(' ').includes('--flows 4'));
  const d = udpEnds('dgram', { rate: '100', size: '64', duration: '1s' });
  if (!('sockbuf' in d.receiver) || !('sockbuf' in d.sender)) return;
  assert.ok(!d.receiver.sockbuf.includes('--gro'), 'the dgram sink has no GRO option');
  assert.ok(d.sender.sockbuf.join(' ').includes('--gso off'));
  assert.throws(() => parsePaths('batch,fast', '--receivers'), /--receivers: 'fast'/);
});

test('a row from both ends: dropped = sent − received, split by where', () => {
  const out: RunOutput = {
    sender: end([
      { event: 'result', sent: 1000, seconds: 2, datagramsPerSecond: 500, gso: false, endedAtMs: 1_000_000 },
    ]),
    receiver: end([
      { event: 'ready', port: 1 },
      {
        event: 'result',
        received: 900,
        kernelDrops: 60,
        userspaceDrops: 30,
        truncated: 10,
        lost: 100,
        tailLost: 0,
        lastReceivedAtMs: 1_001_250,
        packetsPerBatch: { mean: 30 },
        jsCallsPerDatagram: 1 / 30,
        cpuUsPerDatagram: 2,
        kernelDropsUnit: 'datagrams',
        gro: false,
      },
    ]),
    seconds: 3,
  };
  const r = udpRow(out);
  assert.equal(r.dropped, 100);
  assert.equal(r.droppedPct, 10);
  assert.equal(r.receivedPerSecond, 450);
  assert.equal(Number(r.kernelDrops) + Number(r.userspaceDrops) + Number(r.truncated), r.dropped);
  assert.equal(r.driftSeconds, 1.25, "seed 004's drift of the last message");
});

test('bench udp: a ladder of points, or one point per path with --find-max', () => {
  const base = {
    receivers: 'dgram,batch',
    rates: '100,max',
    size: '64',
    tolerance: '0.1%',
    steps: '6',
    rcvbuf: '8MiB',
  };
  const ladder = udp.params(base);
  assert.equal(ladder.duration, '10s');
  assert.deepEqual(udp.points(ladder), [
    { path: 'dgram', rate: '100' },
    { path: 'dgram', rate: 'max' },
    { path: 'batch', rate: '100' },
    { path: 'batch', rate: 'max' },
  ]);
  const fm = udp.params({ ...base, findMax: true });
  assert.equal(fm.duration, '2s');
  assert.equal(fm.tolerancePct, 0.1);
  assert.deepEqual(udp.points(fm), [{ path: 'dgram' }, { path: 'batch' }]);
  assert.throws(() => udp.params({ ...base, rates: '100,soon' }), /--rates: 'soon'/);
});

test('bench streamer: rates × paths × sockets', () => {
  const opts = {
    sockets: '1,8',
    rates: '3000,max',
    flows: '8',
    coalesce: '1ms',
    size: '1232',
    duration: '5s',
    receivers: 'batch,batch+gro',
  };
  const p = streamer.params(opts);
  assert.deepEqual(streamer.points(p), [
    { path: 'batch', rate: '3000', sockets: '1' },
    { path: 'batch', rate: '3000', sockets: '8' },
    { path: 'batch+gro', rate: '3000', sockets: '1' },
    { path: 'batch+gro', rate: '3000', sockets: '8' },
    { path: 'batch', rate: 'max', sockets: '1' },
    { path: 'batch', rate: 'max', sockets: '8' },
    { path: 'batch+gro', rate: 'max', sockets: '1' },
    { path: 'batch+gro', rate: 'max', sockets: '8' },
  ]);
  assert.throws(() => streamer.params({ ...opts, rates: '0' }), /--rates: '0'/);
  // paced, the many flows send one datagram each in turn (a burst would land on one socket); at max, bursts
  const blast = (rate: string) => {
    const e = streamer.ends({ path: 'batch', rate, sockets: '8' }, p).sender;
    return 'sockbuf' in e ? e.sockbuf.join(' ') : '';
  };
  assert.match(blast('3000'), /--flows 8 --batch 1/);
  assert.doesNotMatch(blast('max'), /--batch/);
});

/** The two ends' last lines for a receiver that keeps up to `capacity`/s and loses the excess. */
function modelRun(capacity: number, senderTop: number) {
  return async (ends: ReturnType<typeof udpEnds>): Promise<RunOutput> => {
    if (!('sockbuf' in ends.sender)) throw new Error('a sockbuf sender');
    const asked = ends.sender.sockbuf[ends.sender.sockbuf.indexOf('--rate') + 1];
    const rate = asked === 'max' ? senderTop : Math.min(Number(asked), senderTop);
    const sent = Math.round(rate * 2);
    const received = rate <= capacity ? sent : Math.round(capacity * 2);
    const rx = { event: 'result', received, kernelDrops: sent - received, userspaceDrops: 0, truncated: 0 };
    return {
      sender: end([{ event: 'result', sent, seconds: 2, datagramsPerSecond: rate, gso: false }]),
      receiver: end([
        { ...rx, lost: sent - received, jsCallsPerDatagram: 1, cpuUsPerDatagram: 1, gro: false },
      ]),
      seconds: 2,
    };
  };
}

test('bench udp --find-max: the search lands within a few per cent below the receiver’s capacity', async () => {
  const p = udp.params({
    receivers: 'batch',
    rates: 'max',
    size: '64',
    tolerance: '0.1%',
    steps: '6',
    rcvbuf: '8MiB',
    findMax: true,
  });
  const search = udp.search;
  assert.ok(search);
  for (const [capacity, top] of [
    [111_000, 300_000],
    [250_000, 340_000],
    [2_600_000, 13_000_000],
  ]) {
    const row = await search({ path: 'batch' }, p, modelRun(capacity, top));
    const found = Number(row.maxLossFreeRate);
    assert.ok(found <= capacity && found >= capacity * 0.95, `${found} for a capacity of ${capacity}`);
    assert.equal(row.keptUpWithSender, false);
  }
  const kept = await search({ path: 'batch' }, p, modelRun(400_000, 300_000));
  assert.equal(kept.maxLossFreeRate, 300_000);
  assert.equal(kept.keptUpWithSender, true);
  assert.equal(kept.trials, 1);
});
