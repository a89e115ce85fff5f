// The base of every error sockbuf raises. It sits at the bottom layer (src/sys imports nothing above
// it) so that the kernel's failures belong to the family too; src/errors.ts gathers the classes.

/** sockbuf's own failure codes, `ERR_SOCKBUF_*`; what each means is said on SockbufError. */
export type SockbufErrorCode =
  | 'ERR_SOCKBUF_USAGE'
  | 'ERR_SOCKBUF_ENVIRONMENT'
  | 'ERR_SOCKBUF_LINUX_ONLY'
  | 'ERR_SOCKBUF_FRAME_TOO_BIG'
  | 'ERR_SOCKBUF_JSON_LIMIT'
  | 'ERR_SOCKBUF_INPUT_LIMIT'
  | 'ERR_SOCKBUF_PROTOCOL'
  | 'ERR_SOCKBUF_WORKER'
  | 'ERR_SOCKBUF_RUN_FAILED'
  | 'ERR_SOCKBUF_INTERRUPTED'
  | 'ERR_SOCKBUF_COMMAND_FAILED'
  | 'ERR_SOCKBUF_SERVE_REFUSED';

/**
 * Every error sockbuf raises is a SockbufError; `code` says which failure it is. A message is written
 * once, where the error is raised, and never edited; the fields say the rest.
 *
 * sockbuf's own failures have `ERR_SOCKBUF_*` codes (the type SockbufErrorCode, in `sockbuf/tools`):
 * - `ERR_SOCKBUF_USAGE`: bad input, an option with a value it cannot take ({@link UsageError}; the CLI exits 2)
 * - `ERR_SOCKBUF_ENVIRONMENT`: the environment refused, without a system error to name ({@link EnvironmentError}; exit 3)
 * - `ERR_SOCKBUF_LINUX_ONLY`: a kernel call on another platform ({@link LinuxOnlyError}; exit 3)
 * - `ERR_SOCKBUF_FRAME_TOO_BIG`: a frame longer than the decoder's maximum (FrameError)
 * - `ERR_SOCKBUF_JSON_LIMIT`: a JSON text too long or nested too deep (JsonLimitError)
 * - `ERR_SOCKBUF_INPUT_LIMIT`: a file, pipe or device that held more than its reader's limit; reading
 *   stopped there (InputLimitError: `limit`)
 * - `ERR_SOCKBUF_PROTOCOL`: a peer that broke its protocol: not a sockbuf hello, an iperf3 peer's
 *   unexpected state or document, an end's output without its result line, a refused serve control
 *   line (PeerError)
 * - `ERR_SOCKBUF_WORKER`: a worker thread (a UDP reader, the lab's delay line) that ended or failed
 *   without a system error to name
 * - `ERR_SOCKBUF_RUN_FAILED`: a benchmark run whose end failed (RunFailure: `end`, `endExitCode`)
 * - `ERR_SOCKBUF_INTERRUPTED`: a benchmark run stopped by a signal (Interrupted: `signal`)
 * - `ERR_SOCKBUF_COMMAND_FAILED`: a short command such as `ip` that failed (CommandError)
 * - `ERR_SOCKBUF_SERVE_REFUSED`: a `sockbuf serve` that refused a test (ServeRefused: `reason`)
 *
 * A failure the kernel or a peer reported keeps the errno name as its code, as Node's own system errors
 * do (`EADDRINUSE`, `ECONNREFUSED`, `ENOTFOUND` …): {@link SysError}, UdpSendError, {@link ResolveError},
 * an EnvironmentError with such a cause, a worker thread's failed call. `errno` and `syscall` say more
 * where known. Exit statuses are the CLI's business, not the errors'.
 */
export class SockbufError extends Error {
  /** Which failure: an `ERR_SOCKBUF_*` code, or the errno name of a system failure. */
  readonly code: string;
  /** The errno of a failed system call, where one failed. */
  readonly errno?: number;
  /** The system call that failed, where one did. */
  readonly syscall?: string;

  /** A message written once, its code, and the cause, errno and syscall where known. */
  constructor(
    message: string,
    code: string,
    details: { cause?: unknown; errno?: number; syscall?: string } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SockbufError';
    this.code = code;
    if (details.errno !== undefined) this.errno = details.errno;
    if (details.syscall !== undefined) this.syscall = details.syscall;
  }
}
