// The one place that turns an error into the CLI's exit status. The library's errors say what failed
// (their class and `code`); the numbers are the CLI's: 2 bad usage, 3 the environment refused, 1 the
// rest; an end's or the far end's status is passed on; a signal is 128 + its number.
import { CommanderError } from 'commander';
import { Interrupted, RunFailure } from '../bench/runner.js';
import { EnvironmentError, SockbufError, type SockbufErrorCode } from '../errors.js';
import { ServeRefused } from '../serve/client.js';

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * The exit status of each of sockbuf's own codes. A function decides from the error's typed fields.
 * A new code fails the type check until it is given a status here.
 */
export const EXIT_CODES: Record<SockbufErrorCode, number | ((err: SockbufError) => number)> = {
  ERR_SOCKBUF_USAGE: 2,
  ERR_SOCKBUF_ENVIRONMENT: 3,
  ERR_SOCKBUF_LINUX_ONLY: 3,
  ERR_SOCKBUF_FRAME_TOO_BIG: 1,
  ERR_SOCKBUF_JSON_LIMIT: 1,
  // an input the user named (a file, a pipe, a --proc-root) that went past its reader's limit
  ERR_SOCKBUF_INPUT_LIMIT: 2,
  ERR_SOCKBUF_PROTOCOL: 1,
  ERR_SOCKBUF_WORKER: 1,
  ERR_SOCKBUF_COMMAND_FAILED: 1,
  // an end that exited 2 (bad usage) or 3 (the environment) says so through the runner
  ERR_SOCKBUF_RUN_FAILED: (e) => {
    const end = e instanceof RunFailure ? e.endExitCode : undefined;
    return end === 2 || end === 3 ? end : 1;
  },
  ERR_SOCKBUF_INTERRUPTED: (e) => 128 + (e instanceof Interrupted ? (SIGNAL_NUMBERS[e.signal] ?? 0) : 0),
  // bad parameters are the user's to fix (2); busy, unauthorized, a far end that failed: 3
  ERR_SOCKBUF_SERVE_REFUSED: (e) =>
    e instanceof ServeRefused && (e.reason === 'refused' || e.reason === 'bad-request') ? 2 : 3,
};

/** The exit status for an error a command threw. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return 2;
  if (err instanceof SockbufError) {
    const status = EXIT_CODES[err.code as SockbufErrorCode];
    if (status !== undefined) return typeof status === 'number' ? status : status(err);
    // a system error's code (EADDRINUSE, ENOTFOUND …): an EnvironmentError carrying one is the
    // environment's; a bare SysError is sockbuf's own failure
    if (err instanceof EnvironmentError) return 3;
  }
  return 1;
}
