// The error classes of sockbuf, for applications and the CLI alike. Each says what kind of failure it
// is by its class and `code`; the CLI alone maps them to exit codes (src/cli/exit-codes.ts).
// Values are kept as given: whoever prints a message to a terminal escapes it (the CLI does, with
// printable()), so that a program still sees exactly what was refused. A message is written once,
// where the error is raised: an error that names an option renders it through describe(name).
import { SockbufError, type SockbufErrorCode } from './sys/sockbuf-error.js';

export { SockbufError, type SockbufErrorCode };

/** Renders an option's name: a program's own name by default, the CLI's flag (`--listen`) in the CLI. */
export type OptionNamer = (option: string) => string;

const asWritten: OptionNamer = (option) => option;

/**
 * Bad input: an option with a value it cannot take, or options that do not go together (the CLI exits 2).
 * `option` is the option as the caller wrote it (`listen`, `coalesce`), `options` every option the
 * error names (a conflict names two); `describe(name)` says the message with each option named by
 * `name`, which is how the CLI prints its flags instead.
 */
export class UsageError extends SockbufError {
  declare readonly code: 'ERR_SOCKBUF_USAGE';
  readonly option?: string;
  readonly options: readonly string[];
  /** The value refused, as given, when one was. */
  readonly value?: string;
  /** What the option takes, when the error is about one value. */
  readonly expected?: string;
  readonly #render: (name: OptionNamer) => string;

  /** A usage error: `message` (or a function of how options are named), the options it names, the value refused and what was expected. */
  constructor(
    message: string | ((name: OptionNamer) => string),
    options: string | readonly string[] = [],
    detail: { value?: string; expected?: string } = {},
  ) {
    const render = typeof message === 'string' ? () => message : message;
    super(render(asWritten), 'ERR_SOCKBUF_USAGE');
    this.name = 'UsageError';
    this.#render = render;
    this.options = typeof options === 'string' ? [options] : options;
    if (this.options.length) this.option = this.options[0];
    if (detail.value !== undefined) this.value = detail.value;
    if (detail.expected !== undefined) this.expected = detail.expected;
  }

  /** "invalid value for OPTION: 'VALUE' (expected …)": `expected` is what the option takes. */
  static invalid(option: string, value: unknown, expected: string): UsageError {
    const shown = String(value);
    return new UsageError(
      (name) => `invalid value for ${name(option)}: '${shown}' (expected ${expected})`,
      option,
      { value: shown, expected },
    );
  }

  /** "A and B cannot be combined", with an optional reason. */
  static conflict(a: string, b: string, why?: string): UsageError {
    return new UsageError(
      (name) => `${name(a)} and ${name(b)} cannot be combined${why ? ` (${why})` : ''}`,
      [a, b],
    );
  }

  /** "give A or B, not both". */
  static either(a: string, b: string): UsageError {
    return new UsageError((name) => `give ${name(a)} or ${name(b)}, not both`, [a, b]);
  }

  /** The message with each option it names rendered by `name` (the CLI passes its flags). */
  describe(name: OptionNamer = asWritten): string {
    return this.#render(name);
  }
}

/**
 * The environment refused (not root, port in use, a peer that refuses, a kernel feature or tool
 * missing; the CLI exits 3). When a system error caused it, its `code` and `syscall` are kept (EADDRINUSE,
 * ECONNREFUSED, ENOTFOUND …) and it is the `cause`.
 */
export class EnvironmentError extends SockbufError {
  /** An environment error; `code` defaults to the cause's errno name, else ERR_SOCKBUF_ENVIRONMENT. */
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    const c = options?.cause as { code?: unknown; syscall?: unknown; errno?: unknown } | undefined;
    super(message, options?.code ?? (typeof c?.code === 'string' ? c.code : 'ERR_SOCKBUF_ENVIRONMENT'), {
      cause: options?.cause,
      syscall: typeof c?.syscall === 'string' ? c.syscall : undefined,
      errno: typeof c?.errno === 'number' ? c.errno : undefined,
    });
    this.name = 'EnvironmentError';
  }
}

/**
 * A host name that did not resolve (the CLI exits 3). `code` is the resolver's (ENOTFOUND, EAI_AGAIN …).
 * Raised where the option that carried the name is known: `option` (`to`, `listen`, `remote`) and its
 * whole `value` (`example.invalid:5000`); `describe(name)` says the message with the option named by
 * `name`, which is how the CLI prints its flag.
 */
export class ResolveError extends EnvironmentError {
  /** The option that carried the name, as a program writes it, when known. */
  readonly option?: string;
  /** That option's value as given (`host:port`), when known. */
  readonly value?: string;
  readonly #render: (name: OptionNamer) => string;

  /** The name that did not resolve. */
  readonly host: string;

  /** A host name that did not resolve: the name, the resolver's code (ENOTFOUND …) and, when known, the option that carried it. */
  constructor(host: string, code: string, where?: { option: string; value?: string }) {
    const render = (name: OptionNamer) =>
      where
        ? `cannot resolve ${name(where.option)} '${where.value ?? host}': no such host '${host}' (${code})`
        : `cannot resolve host '${host}' (${code})`;
    super(render(asWritten), { code });
    this.name = 'ResolveError';
    this.host = host;
    this.#render = render;
    if (where) {
      this.option = where.option;
      this.value = where.value ?? host;
    }
  }

  /** The message with the option rendered by `name` (the CLI passes its flags). */
  describe(name: OptionNamer = asWritten): string {
    return this.#render(name);
  }
}

/**
 * A peer that broke its protocol (`code` ERR_SOCKBUF_PROTOCOL): bytes that are not a sockbuf hello, an
 * iperf3 peer's unexpected state or document, an end whose output lacks its result line.
 */
export class PeerError extends SockbufError {
  /** What the peer did wrong, in words; `cause` is the error that revealed it, when there is one. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'ERR_SOCKBUF_PROTOCOL', { cause: options?.cause });
    this.name = 'PeerError';
  }
}

// The kernel's failures are raised at the bottom layer, src/sys, which imports nothing above it.
export { LinuxOnlyError, SysError } from './sys/sys-error.js';
