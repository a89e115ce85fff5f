// The base of every error sockbuf raises. It sits at the bottom layer (src/sys imports nothing above
// it) so that the kernel's failures belong to the family too; src/errors.ts gathers the classes.

/**
 * Every error sockbuf raises is a SockbufError; `code` says which failure it is.
 *
 * sockbuf's own failures have `ERR_SOCKBUF_*` codes:
 * - `ERR_SOCKBUF_USAGE`: bad input, an option with a value it cannot take ({@link UsageError}; the CLI exits 2)
 * - `ERR_SOCKBUF_ENVIRONMENT`: the environment refused, without a system error to name ({@link EnvironmentError}; exit 3)
 * - `ERR_SOCKBUF_LINUX_ONLY`: a kernel call on another platform (LinuxOnlyError; exit 3)
 * - `ERR_SOCKBUF_FRAME_TOO_BIG`: a frame longer than the decoder's maximum (FrameError)
 * - `ERR_SOCKBUF_JSON_LIMIT`: a JSON text too long or nested too deep (JsonLimitError)
 * - `ERR_SOCKBUF_RUN_FAILED`: a benchmark run whose end failed (RunFailure)
 * - `ERR_SOCKBUF_INTERRUPTED`: a benchmark run stopped by a signal (Interrupted)
 * - `ERR_SOCKBUF_COMMAND_FAILED`: a short command such as `ip` that failed (CommandError)
 * - `ERR_SOCKBUF_SERVE_REFUSED`: a `sockbuf serve` that refused a test (ServeRefused)
 *
 * A failure the kernel or a peer reported keeps the errno name as its code, as Node's own system errors
 * do (`EADDRINUSE`, `ECONNREFUSED`, `ENOTFOUND` …): SysError, UdpSendError, ResolveError, and an
 * EnvironmentError with such a cause. `errno` and `syscall` say more where known.
 */
export class SockbufError extends Error {
  /** Which failure: an `ERR_SOCKBUF_*` code, or the errno name of a system failure. */
  readonly code: string;
  /** The errno of a failed system call, where one failed. */
  readonly errno?: number;
  /** The system call that failed, where one did. */
  readonly syscall?: string;

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
