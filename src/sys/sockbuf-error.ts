// The base of every error sockbuf raises. It sits at the bottom layer (src/sys imports nothing above
// it) so that the kernel's failures belong to the family too; src/errors.ts gathers the classes.

/**
 * sockbuf's own failure codes, each raised by one class (or by SockbufError itself):
 * - `ERR_SOCKBUF_USAGE`: bad input, an option with a value it cannot take ({@link UsageError}; the CLI exits 2)
 * - `ERR_SOCKBUF_ENVIRONMENT`: the environment refused, without a system error to name ({@link EnvironmentError}; exit 3)
 * - `ERR_SOCKBUF_LINUX_ONLY`: a kernel call on another platform (LinuxOnlyError; exit 3)
 * - `ERR_SOCKBUF_FRAME_TOO_BIG`: a frame longer than the decoder's maximum (FrameError)
 * - `ERR_SOCKBUF_JSON_LIMIT`: a JSON text too long or nested too deep (JsonLimitError)
 * - `ERR_SOCKBUF_PROTOCOL`: a peer that broke its protocol: not a sockbuf hello, an iperf3 peer's
 *   unexpected state or document, an end's output without its result, a refused serve control line
 *   (PeerError, ProtocolError)
 * - `ERR_SOCKBUF_WORKER`: a worker thread (a UDP reader, the lab's delay line) that ended or failed
 *   without a system error to name (SockbufError)
 * - `ERR_SOCKBUF_RUN_FAILED`: a benchmark run whose end failed (RunFailure)
 * - `ERR_SOCKBUF_INTERRUPTED`: a benchmark run stopped by a signal (Interrupted)
 * - `ERR_SOCKBUF_COMMAND_FAILED`: a short command such as `ip` that failed (CommandError)
 * - `ERR_SOCKBUF_SERVE_REFUSED`: a `sockbuf serve` that refused a test (ServeRefused)
 *
 * The exit statuses are the CLI's (src/cli/exit-codes.ts), not the errors'.
 */
export type SockbufErrorCode =
  | 'ERR_SOCKBUF_USAGE'
  | 'ERR_SOCKBUF_ENVIRONMENT'
  | 'ERR_SOCKBUF_LINUX_ONLY'
  | 'ERR_SOCKBUF_FRAME_TOO_BIG'
  | 'ERR_SOCKBUF_JSON_LIMIT'
  | 'ERR_SOCKBUF_PROTOCOL'
  | 'ERR_SOCKBUF_WORKER'
  | 'ERR_SOCKBUF_RUN_FAILED'
  | 'ERR_SOCKBUF_INTERRUPTED'
  | 'ERR_SOCKBUF_COMMAND_FAILED'
  | 'ERR_SOCKBUF_SERVE_REFUSED';

/**
 * Every error sockbuf raises is a SockbufError; `code` says which failure it is: one of sockbuf's own
 * {@link SockbufErrorCode}s (`ERR_SOCKBUF_*`), or the errno name of a failure the kernel or a peer
 * reported, as Node's own system errors do (`EADDRINUSE`, `ECONNREFUSED`, `ENOTFOUND` …): SysError,
 * UdpSendError, ResolveError, and an EnvironmentError with such a cause. `errno` and `syscall` say
 * more where known. A message is written once, where the error is raised, and never edited.
 */
export class SockbufError extends Error {
  /** Which failure: an `ERR_SOCKBUF_*` code ({@link SockbufErrorCode}), or the errno name of a system failure. */
  readonly code: string;
  /** The errno of a failed system call, where one failed. */
  readonly errno?: number;
  /** The system call that failed, where one did. */
  readonly syscall?: string;

  constructor(
    message: string,
    code: SockbufErrorCode | (string & {}),
    details: { cause?: unknown; errno?: number; syscall?: string } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SockbufError';
    this.code = code;
    if (details.errno !== undefined) this.errno = details.errno;
    if (details.syscall !== undefined) this.syscall = details.syscall;
  }
}
