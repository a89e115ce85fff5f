// The far end's process of one test on a `sockbuf serve` host (what it is told through its environment
// is ends/far-end-limits.ts): a `sockbuf sink …` child (src/sys/process.ts: its
// own process group, a parent-death signal) whose JSON lines are kept for the client's result, with
// serve's byte cap enforced on what it reports.
import { MAX_EVENT_LINE, parseEventLine } from '../ends/event.js';
import { FAR_END_ENV, type FarEndLimits } from '../ends/far-end-limits.js';
import { formatHostPort } from '../policy/address.js';
import { Child, type SpawnSpec, sockbufCommand } from '../sys/process.js';
import type { Kind } from './protocol.js';
import { farArgs, KIND_SPECS, MAX_STREAMS, type TestRequest } from './request.js';

/** The far end's command for each kind; the server adds `--listen` and `--json`. */
export const FAR_END_COMMAND: Record<Kind, string[]> = {
  tcp: ['sink', 'tcp', '--once'],
  drain: ['sink', 'tcp', '--once'],
  ping: ['sink', 'tcp', '--echo', '--once'],
  udp: ['sink', 'udp'],
};

/** Far-end output kept per test (lines beyond are counted, not kept). */
const MAX_RESULT_LINES = 10_000;

/** `node [--import tsx] <sockbuf entry> …args`, as the bench runner starts its ends. */
export function defaultFarEnd(args: string[]): SpawnSpec {
  return sockbufCommand(args);
}

/** Where and under which caps one test's far end runs. */
export interface FarEndPlace {
  /** The address the client reached serve at: the far end listens there. */
  local: string;
  /** The client's address: a UDP far end counts only its datagrams. */
  client: string;
  maxBytes: number;
  maxSeconds: number;
  /** The test's secret: the client gets it in the ready reply, the far end in its environment. */
  secret: string;
  spawn: (args: string[]) => SpawnSpec;
}

/**
 * Starts the far end of a test: `sockbuf sink …` listening where the client reached serve, with serve's
 * caps in its environment (never argv), which it enforces itself on its own data port.
 */
export function startFarEnd(req: TestRequest, at: FarEndPlace): { far: FarEndProcess; args: string[] } {
  const listen = formatHostPort({ host: at.local, port: 0 });
  const args = [...FAR_END_COMMAND[req.kind], ...farArgs(req), '--listen', listen, '--json'];
  const caps: FarEndLimits = {
    secret: at.secret,
    maxBytes: at.maxBytes,
    maxSeconds: at.maxSeconds,
    maxFrame: KIND_SPECS[req.kind].maxMessage,
    maxStreams: MAX_STREAMS,
    peer: at.client,
  };
  const spec = at.spawn(args);
  return {
    far: new FarEndProcess({ ...spec, env: { ...spec.env, [FAR_END_ENV]: JSON.stringify(caps) } }),
    args,
  };
}

export class FarEndProcess extends Child {
  readonly lines: unknown[] = [];
  dropped = 0;
  /** Why serve cut it short (deadline, max-bytes, client gone, …); 'finished' when it ended by itself. */
  stopped?: string;
  private listener?: (obj: Record<string, unknown>) => void;

  constructor(spec: SpawnSpec) {
    super(spec, { maxLine: MAX_EVENT_LINE });
    this.onLine((line) => {
      // bounded like every JSON reader: a line nested too deep is skipped, not kept to be echoed
      const obj = parseEventLine(line);
      if (obj === undefined) return;
      if (this.lines.length < MAX_RESULT_LINES) this.lines.push(obj);
      else this.dropped++;
      this.listener?.(obj);
    });
  }

  /**
   * The port of its ready line, or undefined when it exited or was not ready within `readySeconds`.
   * Meanwhile and after, its byte counts are held to `maxBytes` (interval lines count the bytes since
   * the previous one, summed here; other lines are totals).
   */
  ready(readySeconds: number, maxBytes: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), readySeconds * 1000);
      const done = (port: number | undefined) => {
        clearTimeout(timer);
        resolve(port);
      };
      this.exited.then(() => done(undefined));
      let counted = 0;
      this.listener = (line) => {
        if (line.event === 'ready' && typeof line.port === 'number') done(line.port);
        else if (line.event === 'stopped' && typeof line.reason === 'string')
          this.stopped ??= line.reason.slice(0, 200); // the far end cut the test at one of the caps
        else if (typeof line.bytes === 'number') {
          if (line.event === 'interval') counted += line.bytes;
          const bytes = Math.max(counted, line.bytes);
          if (bytes > maxBytes)
            void this.end(`max-bytes: the far end counted ${bytes} bytes (limit ${maxBytes})`);
        }
      };
    });
  }

  /** SIGTERM, then SIGKILL after `killAfter` seconds; resolves once it and its group were reaped. */
  async end(reason: string, killAfter = 2): Promise<void> {
    this.stopped ??= reason;
    await this.stop(killAfter);
  }
}
