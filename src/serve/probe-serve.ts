// /probe?module=sockbuf: one stream to a far end that a `sockbuf serve` starts, as `bench --remote`
// runs it (ServeClient asks for the far end, runTcpBlast sends to it with the test's secret); the far
// end's connection line adds its side: what it received and its receive buffer.
import { runTcpBlast } from '../ends/tcp-source.js';
import { EnvironmentError, PeerError } from '../errors.js';
import { ServeClient } from './client.js';
import { type Figures, num, type ProbeRun, type Row, senderFigures, WRITE_SIZE } from './probe-figures.js';

export async function probeServe(run: ProbeRun, signal: AbortSignal): Promise<Figures> {
  const client = await ServeClient.connect({ host: run.address, port: run.port }, run.capSeconds);
  const close = () => client.socket.destroy();
  signal.addEventListener('abort', close, { once: true });
  try {
    const ready = await client.startTest('tcp', { duration: run.seconds, size: WRITE_SIZE }, run.token);
    const r = await runTcpBlast(
      {
        host: run.address,
        port: ready.port,
        seconds: run.seconds,
        size: WRITE_SIZE,
        parallel: 1,
        reverse: false,
        sndbuf: run.sndbuf,
        intervalSeconds: 3600,
        secret: ready.secret,
        signal,
      },
      () => {},
    );
    // a far end that stopped taking the stream: the run ended at its grace, not a figure to keep
    if (r.stalled !== undefined) throw new EnvironmentError(String(r.stalled));
    // the far end reset or closed the stream: no figure to keep either (the text names it and what moved)
    if (r.failed !== undefined) throw new PeerError(r.failed);
    // the far end (sink tcp --once) exits when the stream ended; its connection line has its side
    const far = (await client.result()).lines.find((l) => (l as Row).event === 'connection') as
      | Row
      | undefined;
    const pinned = (far?.pinned as { rcvbuf?: unknown } | undefined)?.rcvbuf;
    return {
      ...senderFigures(r),
      receivedBytes: num(far?.bytes),
      receiveBufferBytes: num(far?.rcvbufBytes),
      receiveBufferPinned: typeof pinned === 'boolean' ? pinned : undefined,
    };
  } finally {
    signal.removeEventListener('abort', close);
    client.close();
  }
}
