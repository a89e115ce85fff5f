// Issue 45's exit check: many short sockbuf/dgram processes (scripts/lib/dgram-exit-app.mjs), each
// ending one of four ways, with the preload (`node --import sockbuf/dgram/register`, the app's
// node:dgram) or a plain import of sockbuf/dgram; each ending is classed by its exit code, signal and
// stderr. An abort is exit 134, SIGABRT or "FATAL ERROR" on stderr (koffi's N-API call refused while
// Node stops the reader thread: shared-ring.ts's LIFE). Anything else not expected (another exit
// code, a hang killed after TIMEOUT_MS) is counted apart, with its stderr. Needs dist/ (npm run build).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

export const KINDS = ['natural', 'signal', 'sigterm', 'traffic'] as const;
export const MODES = ['preload', 'plain'] as const;
export type ExitKind = (typeof KINDS)[number];
export type ExitMode = (typeof MODES)[number];

const APP = fileURLToPath(new URL('./dgram-exit-app.mjs', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A process that has not ended this long after it started hangs (it takes ~0.3 s). */
const TIMEOUT_MS = 20_000;
/** The last moment (ms after bind) a process ends: the thread starts ~100 ms after it. */
const MAX_DELAY_MS = 150;

export interface ExitOutcome {
  kind: ExitKind;
  mode: ExitMode;
  runs: number;
  /** Exit 134, SIGABRT or FATAL ERROR on stderr. */
  aborts: number;
  /** Ended otherwise than expected (exit 0; SIGTERM's default for `sigterm`), aborts aside. */
  unexpected: number;
  /** The first few stderrs of both. */
  samples: string[];
}

/** One process: how it ended. */
function once(
  kind: ExitKind,
  mode: ExitMode,
  port: number,
): Promise<{ code: number | null; signal: string | null; err: string }> {
  const delay = Math.floor(Math.random() * MAX_DELAY_MS);
  const args = [
    ...(mode === 'preload' ? ['--import', 'sockbuf/dgram/register'] : []),
    APP,
    kind,
    String(port),
    String(delay),
  ];
  const env = { ...process.env, SOCKBUF_EXIT_PLAIN: mode === 'plain' ? '1' : '0' };
  return new Promise((resolve) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      const was = out.includes('ready');
      out += d;
      if (!was && out.includes('ready') && (kind === 'signal' || kind === 'sigterm'))
        setTimeout(() => c.kill('SIGTERM'), delay);
    });
    const hang = setTimeout(() => {
      err += `\n(still running after ${TIMEOUT_MS} ms: killed)`;
      c.kill('SIGKILL');
    }, TIMEOUT_MS);
    c.on('close', (code, signal) => {
      clearTimeout(hang);
      resolve({ code, signal, err });
    });
  });
}

/** `runs` processes of each kind and mode asked, `parallel` at a time; one outcome per kind and mode. */
export async function runExits(opts: {
  runs: number;
  parallel: number;
  kinds?: readonly ExitKind[];
  modes?: readonly ExitMode[];
}): Promise<ExitOutcome[]> {
  const outcomes: ExitOutcome[] = [];
  const jobs: { o: ExitOutcome }[] = [];
  for (const mode of opts.modes ?? MODES)
    for (const kind of opts.kinds ?? KINDS) {
      const o: ExitOutcome = { kind, mode, runs: 0, aborts: 0, unexpected: 0, samples: [] };
      outcomes.push(o);
      for (let i = 0; i < opts.runs; i++) jobs.push({ o });
    }
  // interleaved, so that every kind meets the same load
  jobs.sort(() => Math.random() - 0.5);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { o } = jobs[next++];
      const r = await once(o.kind, o.mode, await freePort('udp'));
      o.runs++;
      const abort = r.code === 134 || r.signal === 'SIGABRT' || r.err.includes('FATAL ERROR');
      const expected = o.kind === 'sigterm' ? r.signal === 'SIGTERM' : r.code === 0;
      if (abort) o.aborts++;
      else if (!expected) o.unexpected++;
      if ((abort || !expected) && o.samples.length < 3)
        o.samples.push(`exit ${r.code ?? r.signal}: ${r.err.trim().slice(0, 2000)}`);
    }
  };
  await Promise.all(Array.from({ length: opts.parallel }, worker));
  return outcomes;
}
