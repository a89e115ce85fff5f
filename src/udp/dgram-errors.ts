// The errors node:dgram throws and emits, built the same way (class, code, message, errno, syscall,
// address, port), so that code which tests `err.code` or `instanceof RangeError` on a node:dgram
// socket behaves the same on sockbuf's. Pure. Node's own builders are internal (lib/internal/errors);
// these follow their texts for the cases a datagram socket meets.
import { getSystemErrorName, inspect } from 'node:util';
import { ERRNO_NAMES } from '../sys/constants.js';

type ErrorClass = ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor;

/** An error with Node's `code` shown in its name line, as `RangeError [ERR_SOCKET_BAD_PORT]: …`. */
function nodeError(Base: ErrorClass, code: string, message: string): Error & { code: string } {
  const e = new Base(message) as Error & { code: string };
  e.code = code;
  if (e.stack?.startsWith(`${e.name}:`)) e.stack = `${e.name} [${code}]${e.stack.slice(e.name.length)}`;
  return e;
}

/** How Node's messages show a received value ("type number (70000)", "undefined", "an instance of Foo"). */
export function received(value: unknown, cut = 28): string {
  if (value == null) return String(value);
  if (typeof value === 'function' && value.name) return `function ${value.name}`;
  if (typeof value === 'object')
    return value.constructor?.name
      ? `an instance of ${value.constructor.name}`
      : inspect(value, { depth: -1 });
  let shown = inspect(value, { colors: false });
  if (shown.length > cut) shown = `${shown.slice(0, cut - 3)}...`;
  return `type ${typeof value} (${shown})`;
}

export const errBadPort = (port: unknown, allowZero: boolean) =>
  nodeError(
    RangeError,
    'ERR_SOCKET_BAD_PORT',
    `Port should be ${allowZero ? '>=' : '>'} 0 and < 65536. Received ${received(port)}.`,
  );

/** Node's validatePort: a number or a numeric string of a whole number in range; returns it as a number. */
export function validatePort(port: unknown, allowZero: boolean): number {
  if (
    (typeof port !== 'number' && typeof port !== 'string') ||
    (typeof port === 'string' && port.trim().length === 0) ||
    +port !== +port >>> 0 ||
    +port > 0xffff ||
    (port === 0 && !allowZero) // as Node: the number 0 only ('0' is let through, and sends as no port)
  )
    throw errBadPort(port, allowZero);
  return +port | 0;
}

/** Node's validateAbortSignal: undefined, or an object with `aborted` (ERR_INVALID_ARG_TYPE otherwise). */
export function validateAbortSignal(
  signal: unknown,
  name: string,
): asserts signal is AbortSignal | undefined {
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal)))
    throw nodeError(
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      `The "${name}" property must be an instance of AbortSignal. Received ${received(signal, 25)}`,
    );
}

export const errNotRunning = () => nodeError(Error, 'ERR_SOCKET_DGRAM_NOT_RUNNING', 'Not running');
export const errAlreadyBound = () => nodeError(Error, 'ERR_SOCKET_ALREADY_BOUND', 'Socket is already bound');
export const errIsConnected = () => nodeError(Error, 'ERR_SOCKET_DGRAM_IS_CONNECTED', 'Already connected');
export const errNotConnected = () => nodeError(Error, 'ERR_SOCKET_DGRAM_NOT_CONNECTED', 'Not connected');
export const errBadType = () =>
  nodeError(TypeError, 'ERR_SOCKET_BAD_TYPE', 'Bad socket type specified. Valid types are: udp4, udp6');
export const errBadBufferSize = () =>
  nodeError(TypeError, 'ERR_SOCKET_BAD_BUFFER_SIZE', 'Buffer size must be a positive integer');
export const errOutOfBounds = (name: string) =>
  nodeError(RangeError, 'ERR_BUFFER_OUT_OF_BOUNDS', `"${name}" is outside of buffer bounds`);
export const errFdType = () => nodeError(TypeError, 'ERR_INVALID_FD_TYPE', 'Unsupported fd type: UNKNOWN');
export const errMissingArgs = (name: string) =>
  nodeError(TypeError, 'ERR_MISSING_ARGS', `The "${name}" argument must be specified`);

/** ERR_INVALID_ARG_TYPE: `expected` as Node words it ("of type number", "an instance of Buffer"). */
export const errArgType = (name: string, expected: string, value: unknown) =>
  nodeError(
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    `The "${name}" argument must be ${expected}. Received ${received(value, 25)}`,
  );

/** ERR_OUT_OF_RANGE, as Node words it (numbers past 2^32 shown with _ separators). */
export function errOutOfRange(name: string, range: string, value: unknown): Error {
  let shown = String(value);
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) > 2 ** 32)
    shown = shown.replace(/\B(?=(\d{3})+(?!\d))/g, '_');
  return nodeError(
    RangeError,
    'ERR_OUT_OF_RANGE',
    `The value of "${name}" is out of range. It must be ${range}. Received ${shown}`,
  );
}

/** Node's validateUint32 (what createSocket checks recvBufferSize and sendBufferSize with). */
export function validateUint32(value: unknown, name: string): void {
  if (typeof value !== 'number') {
    const what = name.includes('.') ? 'property' : 'argument';
    throw nodeError(
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      `The "${name}" ${what} must be of type number. Received ${received(value, 25)}`,
    );
  }
  if (!Number.isInteger(value)) throw errOutOfRange(name, 'an integer', value);
  if (value < 0 || value > 4294967295) throw errOutOfRange(name, '>= 0 && <= 4294967295', value);
}

export const BUFFER_TYPES = 'of type string or an instance of Buffer, TypedArray, or DataView';

// libuv's names (Node's own), for the errnos sockbuf's table does not list (EDESTADDRREQ …)
const codeOf = (negErrno: number) => ERRNO_NAMES[-negErrno] ?? getSystemErrorName(negErrno);

/** Node's ErrnoException: `${syscall} ${code}`, with errno (negative, as libuv's), code, syscall. */
export function errnoException(negErrno: number, syscall: string): Error {
  const code = codeOf(negErrno);
  return Object.assign(new Error(`${syscall} ${code}`), { errno: negErrno, code, syscall });
}

/** Node's ExceptionWithHostPort: `${syscall} ${code} ${address}:${port}`, with address (and port when set). */
export function exceptionWithHostPort(
  negErrno: number,
  syscall: string,
  address: string | undefined,
  port?: unknown,
): Error {
  const code = codeOf(negErrno);
  const where = port && (port as number) > 0 ? ` ${address}:${port}` : address ? ` ${address}` : '';
  const e = Object.assign(new Error(`${syscall} ${code}${where}`), {
    errno: negErrno,
    code,
    syscall,
    address,
  });
  if (port) Object.assign(e, { port });
  return e;
}

/** Node's SystemError: code, info, and errno/syscall as accessors onto info; `SystemError [code]: …`. */
class SystemError extends Error {
  declare code: string;
  declare info: Record<string, unknown>;
  declare errno: number;
  declare syscall: string;
  constructor(code: string, message: string, info: Record<string, unknown>) {
    super(message);
    this.code = code;
    Object.defineProperties(this, {
      name: { value: 'SystemError', enumerable: false, writable: true, configurable: true },
      info: { value: info, enumerable: true, configurable: true, writable: false },
      errno: {
        get: () => info.errno,
        set: (v) => {
          info.errno = v;
        },
        enumerable: true,
        configurable: true,
      },
      syscall: {
        get: () => info.syscall,
        set: (v) => {
          info.syscall = v;
        },
        enumerable: true,
        configurable: true,
      },
    });
    const head = this.stack?.indexOf(': ') ?? -1;
    if (head >= 0) this.stack = `SystemError [${code}]${this.stack?.slice(head)}`;
  }
  override toString(): string {
    return `${this.name} [${this.code}]: ${this.message}`;
  }
}

/** ERR_SOCKET_BUFFER_SIZE, a SystemError: `Could not get or set buffer size: uv_recv_buffer_size returned EBADF (…)`. */
export function errBufferSize(negErrno: number, which: 'recv' | 'send'): Error {
  const code = codeOf(negErrno);
  const syscall = `uv_${which}_buffer_size`;
  const message = DESCRIPTIONS[code] ?? code.toLowerCase();
  return new SystemError(
    'ERR_SOCKET_BUFFER_SIZE',
    `Could not get or set buffer size: ${syscall} returned ${code} (${message})`,
    { errno: negErrno, code, message, syscall },
  );
}

const DESCRIPTIONS: Record<string, string> = {
  EBADF: 'bad file descriptor',
  EINVAL: 'invalid argument',
  ENOBUFS: 'no buffer space available',
  EPERM: 'operation not permitted',
};
