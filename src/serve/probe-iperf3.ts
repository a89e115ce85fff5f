// /probe?module=iperf3: one stream against a stock iperf3 -s, run as `blast tcp --iperf3` runs it.
import { runIperf3Blast } from '../ends/iperf3/iperf3-blast.js';
import { type Figures, type ProbeRun, senderFigures, WRITE_SIZE } from './probe-figures.js';

export async function probeIperf3(run: ProbeRun, signal: AbortSignal): Promise<Figures> {
  const r = await runIperf3Blast(
    {
      host: run.address,
      port: run.port,
      seconds: run.seconds,
      parallel: 1,
      size: WRITE_SIZE,
      reverse: false,
      sndbuf: run.sndbuf,
      intervalSeconds: 3600,
      answerSeconds: Math.min(10, run.capSeconds),
      signal,
    },
    () => {},
  );
  return { ...senderFigures(r), receivedBytes: r.server.bytes };
}
