// The scenario interface: what one benchmark declares. A scenario is one file in src/bench/scenarios/
// whose default export is a `Scenario`. It says what to run and how to read the results, never where
// the ends run (that is the placement's job, src/bench/placement.ts).
import type { OptionSpec, OptionsFunction } from './options.js';

/**
 * One end of a run: a `sockbuf` child command, or a Node module run in a child process.
 *
 * Placeholders in the arguments are replaced before the end starts:
 * - `{host}` (both ends): the address the receiver listens on and the sender connects to
 *   (127.0.0.1 for `local`; the server namespace's address for `lab`).
 * - `{port}` and any other `{field}` (sender only): that field of the receiver's ready line, so a
 *   receiver started with `--listen {host}:0` tells the sender the port the kernel chose.
 */
export type EndCommand =
  /** `['sink', '--listen', '{host}:0', '--json']` runs `sockbuf sink --listen 127.0.0.1:0 --json`. */
  | { sockbuf: string[] }
  /** An absolute path to a .js/.mjs (or, under tsx, .ts) file, run as `node MODULE ...args`. */
  | { module: string; args?: string[] };

/** The two ends of one run. */
export interface Ends {
  /** Started first; must print a ready line (`{"event":"ready",...}`, see ends.ts) once it can be reached. */
  receiver: EndCommand;
  /** Started once the receiver is ready; its exit (code 0) ends the sending side of the run. */
  sender: EndCommand;
  /**
   * How the receiver ends once the sender has exited: `'exit'` (default) it exits by itself (for
   * example after its one connection closed); `'term'` the runner sends it SIGTERM, and it prints its
   * last JSON lines and exits.
   */
  receiverStop?: 'exit' | 'term';
}

/** Everything the two ends printed in one run. `lines` holds each JSON object of stdout, in order. */
export interface EndOutput {
  lines: Record<string, unknown>[];
  /** The receiver's ready line (undefined for the sender). */
  ready?: Record<string, unknown>;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines the end wrote on stderr. */
  stderrTail: string[];
}

/** What one run of a point produced: the output of each end. */
export interface RunOutput {
  receiver: EndOutput;
  sender: EndOutput;
  /** Wall-clock seconds from starting the receiver to both ends gone. */
  seconds: number;
}

/**
 * One point of a scenario (one row of its table): a label per dimension, for example
 * `{ policy: 'adaptive', size: '64K' }`. Labels name the row in the table and in `--expect`
 * (`adaptive/data` compares the points labelled `adaptive` with those labelled `data` that agree
 * on every other label). Keep labels short, with no spaces, `/`, `[` or `]`.
 */
export type Point = Record<string, string>;

/** A value of a result row. Numeric columns get median/min/max over the repeats. */
export type Cell = number | string | boolean | null;
/** One row of a scenario's table: its cells by column key. */
export type Row = Record<string, Cell>;

/** How the table shows a numeric column (the JSON always has the raw number). */
export interface Column {
  key: string;
  /** Header text; defaults to the key. */
  title?: string;
  /**
   * Defaults to a format guessed from the key's unit suffix: `bytesPerSecond` → bit/s,
   * `…Bytes`/`bytes` → KiB/MiB, `seconds`/`…Seconds` → s/ms/µs, `…Us` → µs, `…Pct` → %.
   */
  format?: (value: number) => string;
}

/**
 * A benchmark: its options, its points, the two ends of each point, and how their JSON lines
 * become a result row. `P` is the scenario's parsed parameters.
 *
 * @example
 * // src/bench/scenarios/tcp-drain.ts
 * import type { Scenario } from '../scenario.js';
 * import { lastEvent } from '../ends.js';
 * import { parseList, parseSize, parseDuration } from '../../policy/units.js';
 *
 * interface Params { sizes: string[]; duration: string }
 *
 * const scenario: Scenario<Params> = {
 *   name: 'tcp-drain',
 *   description: 'TCP drain rate by read-buffer size (seed 002)',
 *   options: [
 *     { flags: '--sizes <list>', description: 'read sizes', default: '64K,256K' },
 *     { flags: '--duration <d>', description: 'per run', default: '2s' },
 *   ],
 *   params: (o) => {
 *     const sizes = String(o.sizes).split(',');
 *     for (const s of sizes) parseSize(s, '--sizes');
 *     parseDuration(String(o.duration), '--duration');
 *     return { sizes, duration: String(o.duration) };
 *   },
 *   points: (p) => p.sizes.map((size) => ({ size })),
 *   ends: (pt, p) => ({
 *     receiver: { sockbuf: ['sink', '--listen', '{host}:0', '--read-size', pt.size, '--json'] },
 *     sender: { sockbuf: ['blast', '--to', '{host}:{port}', '--duration', p.duration, '--json'] },
 *   }),
 *   row: (out) => ({ bytesPerSecond: Number(lastEvent(out.receiver, 'result').bytesPerSecond) }),
 *   primary: 'bytesPerSecond',
 * };
 * export default scenario;
 */
export interface Scenario<P = Record<string, unknown>> {
  /** The name on the command line (`sockbuf bench NAME`); the same as the file name. */
  name: string;
  /** One line for `sockbuf bench --help`. */
  description: string;
  /**
   * The scenario's own options as data (the common ones are added for you). The old form, a function
   * handed a commander command (`(cmd) => cmd.option(…)`), still works.
   */
  options?: OptionSpec[] | OptionsFunction;
  /**
   * Checks and turns the parsed options into parameters: throw UsageError (naming the option and
   * value) for bad input. The result goes into the document's `params`, so keep it JSON.
   */
  params: (opts: Record<string, unknown>) => P;
  /** The points to run, in table order. */
  points: (params: P) => Point[];
  /** The two ends of one point. */
  ends: (point: Point, params: P) => Ends;
  /** One result row from one run's output; throw an Error if the output lacks what it needs. */
  row: (out: RunOutput, point: Point, params: P) => Row;
  /** The numeric column `--expect 'a/b >= 1.3'` compares when no column is named. */
  primary?: string;
  /** The numeric columns the table shows, in order (default: every numeric column). */
  columns?: Column[];
  /**
   * For a point whose one row needs several runs (a search, such as the highest loss-free rate):
   * called for each point and repeat instead of ends() + row(); `run` runs the two ends once (with
   * the per-run timeout) and may be called as often as the search needs.
   */
  search?: (point: Point, params: P, run: (ends: Ends) => Promise<RunOutput>) => Promise<Row>;
  /** Per-run timeout in seconds when `--timeout` is not given (default 60). */
  timeoutSeconds?: (params: P) => number;
  /** Called before each run of a point (e.g. set the host sysctls the point is about). */
  setUp?: (point: Point, params: P) => void | Promise<void>;
  /** Called once after the last run, also after a failure or a signal (e.g. restore those sysctls). */
  tearDown?: (params: P) => void | Promise<void>;
  /** The lab to run across when neither --placement, --lab nor a surrounding lab says otherwise. */
  defaultLab?: string;
}
