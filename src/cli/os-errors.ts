// A system call that refused a value the user gave (bind EINVAL for `--listen [fe80::1]:PORT`, EISDIR
// for `--html DIR`) is said with the option that carried the value: a new error naming it, the system's
// own as its cause. Bad input is a UsageError (exit 2), what the host refuses an EnvironmentError (3).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EnvironmentError, UsageError } from '../errors.js';

interface SystemFailure {
  code: string;
  syscall?: string;
  path?: string;
}

/** The first error of `err`'s cause chain that carries a system error code (EINVAL, EISDIR …). */
function systemFailure(err: unknown): SystemFailure | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  )
    if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e as SystemFailure;
  return undefined;
}

/** Codes that mean the value itself cannot be: bad usage (exit 2). */
const BAD_VALUE: Record<string, string> = {
  EINVAL: 'the kernel refused it: EINVAL',
  EISDIR: 'a folder: expected a file name (EISDIR)',
  ENOTDIR: 'a part of it is not a folder (ENOTDIR)',
  ENOENT: 'its folder does not exist (ENOENT)',
  ENAMETOOLONG: 'too long a name (ENAMETOOLONG)',
};

/** Codes where the host refuses a value that could be right elsewhere (exit 3). EADDRINUSE says itself. */
const HOST_REFUSES: Record<string, string> = {
  EADDRNOTAVAIL: 'not an address of this host (EADDRNOTAVAIL)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'not permitted (EPERM)',
  EROFS: 'a read-only file system (EROFS)',
};

/** An error naming the option of `cmd` whose value a system call refused, or undefined when none did. */
export function optionRefused(cmd: Command, err: unknown): Error | undefined {
  if (err instanceof UsageError) return undefined;
  const failure = systemFailure(err);
  if (!failure) return undefined;
  if (!(failure.code in BAD_VALUE || failure.code in HOST_REFUSES)) return undefined;
  const values = cmd.opts();
  const given = (long: string) => {
    const o = cmd.options.find((x) => x.long === long);
    const v = o && values[o.attributeName()];
    return typeof v === 'string' ? v : undefined;
  };
  let flag: string | undefined;
  let value: string | undefined;
  if (failure.syscall === 'bind' || failure.syscall === 'listen') {
    flag = '--listen';
    value = given(flag);
  } else if (failure.path !== undefined) {
    const path = resolve(failure.path);
    const o = cmd.options.find((x) => {
      const v = values[x.attributeName()];
      return x.long && typeof v === 'string' && v !== '' && resolve(v) === path;
    });
    flag = o?.long;
    value = flag && given(flag);
  }
  if (!flag || value === undefined) return undefined;
  const why = BAD_VALUE[failure.code];
  if (why) {
    const linkLocal = flag === '--listen' && failure.code === 'EINVAL' && /^\[?fe80:/i.test(value);
    const more = linkLocal ? '; a link-local address needs its interface, such as [fe80::1%eth0]:PORT' : '';
    const shown = value;
    return new UsageError(
      (name) => `invalid value for ${name(String(flag))}: '${shown}' (${why}${more})`,
      flag,
      {
        value,
      },
    );
  }
  return new EnvironmentError(`${flag} '${value}': ${HOST_REFUSES[failure.code]}`, { cause: err });
}
